"""Shared test setup: the office components live in tests/office.py."""

import tempfile

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

# Tests write only under temporary folders: no example database, and hypothesis's own cache
# (of the constants it finds in the code) in a folder of the run's, not in the checkout.
set_hypothesis_home_dir(tempfile.mkdtemp(prefix="agboss-hypothesis-"))
settings.register_profile("agboss", database=None)
settings.load_profile("agboss")
