class BaseChecks:
    """Tests defined here run from a subclass in another file: -vv shows "<- tests/helpers_base.py"."""

    def test_inherited(self):
        pass
