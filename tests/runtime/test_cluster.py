"""The Ray executor's connect check: a cluster address must accept a connection within a few
seconds before ``ray.init`` is asked to join it (``ray.init`` retries a silent address for minutes).
Needs no Ray: the check is a socket connect."""

import socket
import time

import pytest

from pgstudio.errors import PgStudioError
from pgstudio.runtime.executor.cluster import check_reachable, host_port


def _closed_port() -> int:
    """A local port nothing listens on: bound by the system, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address, want", [
    ("127.0.0.1:6380", ("127.0.0.1", 6380)), ("head", ("head", 6379)), ("ray://head", ("head", 10001)),
    ("ray://head:20001", ("head", 20001)), ("[::1]:6379", ("::1", 6379)),
    ("auto", None), ("local", None), ("", None), ("head:port", None)])
def test_an_address_names_the_host_and_port_to_try(address, want):
    assert host_port(address) == want


def test_an_address_where_nothing_listens_is_said_at_once():
    port = _closed_port()
    t0 = time.monotonic()
    with pytest.raises(PgStudioError, match=rf"no Ray cluster answers at '127.0.0.1:{port}': 127.0.0.1:{port} refused "
                                            r"the connection \(nothing listens there\); start one there with `ray start"):
        check_reachable(f"127.0.0.1:{port}", 1.0)
    assert time.monotonic() - t0 < 1.0


def test_an_address_that_does_not_answer_is_bounded_by_the_timeout(monkeypatch):
    asked = []

    def silent(target, timeout):
        asked.append((target, timeout))
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    with pytest.raises(PgStudioError, match=r"at 'ray://head': head:10001 did not answer within 2.5 s; .*--ray local"):
        check_reachable("ray://head", 2.5)
    assert asked == [(("head", 10001), 2.5)]
    check_reachable("auto", 2.5)  # Ray finds a running cluster itself
    check_reachable("local", 2.5)
    assert len(asked) == 1


def test_a_listening_address_passes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        check_reachable(f"127.0.0.1:{s.getsockname()[1]}", 1.0)
