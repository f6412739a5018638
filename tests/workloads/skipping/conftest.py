"""The session's SeaweedFS (S3) of the objects tests, shared: one per worker, as that fixture says."""

from tests.workloads.objects.conftest import s3  # noqa: F401  (a fixture)
