def parse(x):
    return int(x)


def main():
    return parse("abc")


main()
