def test_in_unicode_file():
    pass
