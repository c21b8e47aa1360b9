"""The shared test applications and their components: what the tests run, kept apart from the
tests themselves (each test file keeps only its behaviour)."""
