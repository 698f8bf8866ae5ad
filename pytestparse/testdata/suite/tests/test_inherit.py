from helpers_base import BaseChecks


class TestInherited(BaseChecks):
    pass
