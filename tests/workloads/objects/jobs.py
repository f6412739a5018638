"""The objects engine's job for the tests: an S3 put-only job on a server's bucket, fields overridden by name."""


def base_job(state, prefix, **extra):
    job = {
        "protocol": "s3",
        "s3": {
            "endpoint": state["s3_endpoint"],
            "access_key": state["access_key"],
            "secret_key": state["secret_key"],
            "bucket": state["bucket"],
            "prefix": prefix,
        },
        "mix": [{"op": "put"}],
        "object_size": {"dist": "fixed", "bytes": 4096},
        "objects": 50,
        "ops": 50,
        "load": {"model": "closed", "concurrency": 4},
    }
    for key, value in extra.items():
        if key == "s3":
            job["s3"].update(value)
        else:
            job[key] = value
    return job
