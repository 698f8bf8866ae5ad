"""A Django-style unittest suite: run as `python3 -m unittest -v app.tests`."""
import sys
import unittest


class ModelTests(unittest.TestCase):
    def test_ok(self):
        pass

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise ValueError("boom")

    @unittest.skip("no database")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.fail("expected")

    @unittest.expectedFailure
    def test_unexpected_success(self):
        pass

    def test_docstring(self):
        """Docstring first line is the name Django tests get.

        More text.
        """

    def test_version(self):
        """--version is equivalent to version"""

    def test_subtests(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)


class InterruptedTests(unittest.TestCase):
    def test_system_check(self):
        sys.stderr.write("System check identified no issues (0 silenced).\n")
        sys.stderr.flush()

    def test_server_error(self):
        sys.stderr.write("Internal Server Error: /admin/view/\n")
        sys.stderr.flush()

    def test_testing_against(self):
        sys.stderr.write(
            "Testing against Django installed in '/testbed/django' with up to 2 processes\n"
            "Found 1 test(s).\n"
            "System check identified no issues (0 silenced).\n"
        )
        sys.stderr.flush()


class MigrationTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # django__django-7188: migration output glued to the next test line.
        sys.stderr.write("  Applying sites.0002_alter_domain_unique...")
        sys.stderr.flush()

    def test_no_migrations(self):
        pass
