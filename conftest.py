"""What every test session of this checkout shares: core's tests and each plugin's."""

from hypothesis import settings

# Hypothesis fails an example that takes over 200 ms by default. The suite runs four xdist
# workers on two cores beside other tox environments, where a pause of the scheduler alone
# exceeds that (a JSON-decoding example once took 563 ms): such a deadline measures the
# machine, not the code. Speed is measured in benchmarks/, never asserted in a test.
settings.register_profile("agentkit", deadline=None)
settings.load_profile("agentkit")
