src = "x = (1,\n"
exec(compile(src, "generated.py", "exec"))
