class Oops(Exception):
    pass


class Service:
    def call(self):
        raise Oops("custom failure")


Service().call()
