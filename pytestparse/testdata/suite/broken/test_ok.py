def test_ok_next_to_broken():
    pass
