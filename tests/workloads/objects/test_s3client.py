"""storbench's S3 client: DeleteObjects answers with per-key errors, and deleting a prefix of more keys than
one batch against the real SeaweedFS server."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from storbench.s3client import DELETE_BATCH, DeleteError, S3Client, delete_result

# A DeleteObjects answer as S3 returns it (Quiet false): one key deleted, two refused.
PARTLY_REFUSED = b"""<?xml version="1.0" encoding="UTF-8"?>
<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Deleted>
    <Key>run/a&amp;b.bin</Key>
  </Deleted>
  <Error>
    <Key>run/locked-1.bin</Key>
    <Code>AccessDenied</Code>
    <Message>Access Denied</Message>
  </Error>
  <Error>
    <Key>run/locked-2.bin</Key>
    <Code>AccessDenied</Code>
    <Message>Access Denied</Message>
  </Error>
</DeleteResult>"""


def test_delete_result_reads_deleted_keys_and_per_key_errors():
    deleted, failed = delete_result(PARTLY_REFUSED)
    assert deleted == ["run/a&b.bin"]
    assert failed == [
        ("run/locked-1.bin", "AccessDenied", "Access Denied"),
        ("run/locked-2.bin", "AccessDenied", "Access Denied"),
    ]
    assert delete_result(b'<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>') == ([], [])


def test_a_200_with_per_key_errors_raises_naming_the_first_refused_key():
    client = S3Client("http://127.0.0.1:1", "k", "s")
    client.request = lambda *args, **kwargs: (200, {}, PARTLY_REFUSED)
    with pytest.raises(DeleteError) as caught:
        client.delete_keys("b", ["run/a&b.bin", "run/locked-1.bin", "run/locked-2.bin"])
    assert str(caught.value) == (
        "could not delete 2 of 3 objects in bucket b; the first, run/locked-1.bin: AccessDenied Access Denied"
    )
    assert caught.value.code == "AccessDenied"


@pytest.mark.s3
def test_delete_prefix_of_more_than_one_batch_deletes_all_and_lists_each_page_once(s3, client):
    prefix = "delete-batches/"
    keys = [f"{prefix}k{i:05d}" for i in range(DELETE_BATCH + 100)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda key: client.put("storbench", key, b"x"), keys))
    client.put("storbench", "delete-batches-other/stays", b"y")  # shares the prefix's text but not its "/"
    calls = {"list": 0, "pages": 0, "deletes": 0}
    list_, request = client.list, client.request

    def counted_list(*args, **kwargs):
        calls["list"] += 1
        return list_(*args, **kwargs)

    def counted_request(method, bucket, key="", query=None, **kwargs):
        calls["pages"] += "list-type" in (query or {})
        calls["deletes"] += "delete" in (query or {})
        return request(method, bucket, key, query, **kwargs)

    client.list, client.request = counted_list, counted_request
    assert client.delete_prefix("storbench", prefix) == len(keys)
    assert calls == {"list": 1, "pages": 2, "deletes": 2}
    client.list, client.request = list_, request
    assert list(client.list("storbench", prefix)) == []
    assert list(client.list("storbench", "delete-batches-other/")) == ["delete-batches-other/stays"]
    client.delete("storbench", "delete-batches-other/stays")
