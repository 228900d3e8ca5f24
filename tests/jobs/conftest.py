import shutil

import pytest

from ikstack.jobs import sample_path


@pytest.fixture
def ur5_sample(tmp_path):
    """A private copy of the bundled UR5 sample (3 episodes x 200 frames)."""
    dst = tmp_path / "in"
    shutil.copytree(sample_path("ur5"), dst)
    return dst
