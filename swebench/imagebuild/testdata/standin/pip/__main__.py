"""Stand-in for `python -m pip` (swebox tests, offline).

`install` of the current directory (".", "-e .", ".[extra]") puts the
directory on sys.path with a .pth file, as an editable install would; every
package from an index is printed and skipped.
"""
import os
import site
import sys

args = sys.argv[1:]
print("stand-in pip: offline, nothing downloaded: pip " + " ".join(args))
if args[:1] == ["install"]:
    for a in args[1:]:
        a = a.strip("'\"")
        if a == "." or a.startswith(".["):
            pth = os.path.join(site.getsitepackages()[0], "standin-editable.pth")
            try:
                with open(pth, "a") as f:
                    f.write(os.getcwd() + "\n")
            except OSError as e:
                print("stand-in pip: cannot write %s: %s" % (pth, e))
