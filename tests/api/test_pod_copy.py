"""Pod.__copy__ (the simulator copies every pod of the cluster it is given) against the generic shallow copy it
stands for (``__reduce_ex__`` and ``copy._reconstruct``, what ``copy.copy`` does for a class without one)."""

from __future__ import annotations

import copy
from dataclasses import fields

from hypothesis import given
from hypothesis import strategies as st

from packsched.api.objects import Container, Pod


@given(
    st.builds(
        Pod,
        st.text(min_size=1, max_size=5),
        st.sampled_from(["default", "kube-system"]),
        labels=st.dictionaries(st.sampled_from(["app", "tier"]), st.text(max_size=3), max_size=2),
        containers=st.lists(st.builds(Container, st.just("c"), st.dictionaries(st.just("cpu"), st.integers(0, 9)))),
        priority=st.integers(-5, 5),
        node_name=st.sampled_from(["", "n1"]),
        arrival_time=st.floats(0, 10),
    ),
    st.booleans(),
)
def test_a_pod_copies_as_the_generic_copy_does(pod: Pod, extra: bool) -> None:
    """Same class, every field the same object (shallow), and nothing more or less in the instance (an attribute
    set outside the fields travels too); the original is left as it was."""
    if extra:
        pod.__dict__["_kept"] = object()
    before = dict(pod.__dict__)
    generic = copy._reconstruct(pod, None, *pod.__reduce_ex__(4))  # type: ignore[attr-defined]
    fast = copy.copy(pod)
    assert fast is not pod and type(fast) is type(generic) is Pod
    assert fast.__dict__.keys() == generic.__dict__.keys()
    for name in fast.__dict__:
        assert fast.__dict__[name] is generic.__dict__[name] is pod.__dict__[name]
    assert [f.name for f in fields(fast)] == [f.name for f in fields(Pod)]
    assert pod.__dict__ == before
    fast.labels = {"changed": "yes"}
    assert pod.labels is before["labels"]
