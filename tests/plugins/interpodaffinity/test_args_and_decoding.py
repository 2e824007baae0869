"""InterPodAffinityArgs (decode, default, validation with upstream's words and field paths) and the pod fields the
plugin reads (podAffinity / podAntiAffinity, matchLabelKeys merged as the API server merges them)."""

from __future__ import annotations

from typing import Any

import pytest

from packsched.api.errors import ErrorList, InputError
from packsched.api.manifests import decode_document
from packsched.api.objects import LabelSelector, Requirement
from packsched.config import default_config, load_config_data
from packsched.config.types import InterPodAffinityArgs
from packsched.framework.podinfo import make_pod_info
from packsched.live.decode import decode as live_decode
from packsched.live.port import Resource
from packsched.plugins.interpodaffinity.terms import pod_terms
from packsched.plugins.registry import in_tree_registry

KNOWN = in_tree_registry()


def _cfg(version: str, args: dict[str, Any]) -> Any:
    doc = {
        "apiVersion": f"kubescheduler.config.k8s.io/{version}",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "pluginConfig": [{"name": "InterPodAffinity", "args": args}]}],
    }
    return load_config_data(doc, "c.yaml", KNOWN)


def test_default_profile_runs_inter_pod_affinity_with_default_args() -> None:
    prof = default_config(KNOWN).profiles[0]
    assert prof.plugin_config["InterPodAffinity"] == InterPodAffinityArgs(1, False)
    assert "InterPodAffinity" not in prof.omitted_default_plugins
    assert "InterPodAffinity" in [p.name for p in prof.plugins.multi_point.enabled]


@pytest.mark.parametrize("version", ["v1", "v1beta3", "v1beta2"])
def test_args_are_read(version: str) -> None:
    cfg = _cfg(version, {"hardPodAffinityWeight": 10, "ignorePreferredTermsOfExistingPods": True})
    assert cfg.profiles[0].plugin_config["InterPodAffinity"] == InterPodAffinityArgs(10, True)
    assert _cfg(version, {}).profiles[0].plugin_config["InterPodAffinity"] == InterPodAffinityArgs(1, False)


@pytest.mark.parametrize("weight", [-1, 101])
def test_hard_pod_affinity_weight_out_of_range(weight: int) -> None:
    with pytest.raises(InputError) as exc:
        _cfg("v1", {"hardPodAffinityWeight": weight})
    assert [str(e) for e in exc.value.errors] == [
        f"c.yaml: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: {weight}: "
        "not in valid range [0, 100]"
    ]


def test_bounds_are_valid() -> None:
    assert (
        _cfg("v1", {"hardPodAffinityWeight": 0}).profiles[0].plugin_config["InterPodAffinity"].hard_pod_affinity_weight
        == 0
    )
    assert (
        _cfg("v1", {"hardPodAffinityWeight": 100})
        .profiles[0]
        .plugin_config["InterPodAffinity"]
        .hard_pod_affinity_weight
        == 100
    )


def test_v1beta1_has_no_ignore_preferred_terms() -> None:
    assert (
        _cfg("v1beta1", {"hardPodAffinityWeight": 5})
        .profiles[0]
        .plugin_config["InterPodAffinity"]
        .hard_pod_affinity_weight
        == 5
    )
    with pytest.raises(InputError) as exc:
        _cfg("v1beta1", {"ignorePreferredTermsOfExistingPods": True})
    assert "ignorePreferredTermsOfExistingPods: unknown field" in str(exc.value)


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web", "rev": "7", "tier": "a"}},
    "spec": {
        "containers": [{"name": "c"}],
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": "zone",
                        "matchLabelKeys": ["rev", "absent"],
                        "mismatchLabelKeys": ["tier"],
                    }
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 20,
                        "podAffinityTerm": {
                            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                            "topologyKey": "kubernetes.io/hostname",
                            "namespaces": ["a", "b"],
                            "namespaceSelector": {"matchLabels": {"env": "prod"}},
                        },
                    }
                ]
            },
        },
    },
}


def _decode(doc: dict[str, Any]) -> tuple[Any, ErrorList]:
    errors = ErrorList()
    return decode_document(doc, "pod.yaml", errors), errors


def test_pod_affinity_is_decoded_and_no_longer_unsupported() -> None:
    cluster, errors = _decode(POD)
    assert not errors.items
    [pod] = cluster.pods
    assert pod.unsupported_features == []
    [req] = pod.pod_affinity.required
    assert (req.topology_key, req.match_label_keys, req.mismatch_label_keys) == ("zone", ("rev", "absent"), ("tier",))
    [pref] = pod.pod_anti_affinity.preferred
    assert pref.weight == 20
    assert pref.term.namespaces == ("a", "b")
    assert pref.term.namespace_selector == LabelSelector((("env", "prod"),))


def test_match_label_keys_are_merged_from_manifests_once() -> None:
    cluster, _ = _decode(POD)
    info = make_pod_info(cluster.pods[0])
    [t] = pod_terms(info).required_affinity
    assert t.selector == LabelSelector(
        (("app", "web"),), (Requirement("rev", "In", ("7",)), Requirement("tier", "NotIn", ("a",)))
    )
    assert t.namespaces == frozenset({"ns"})
    again = make_pod_info(cluster.pods[0])  # merged already: not twice
    assert pod_terms(again).required_affinity[0].selector == t.selector


def test_objects_from_the_api_server_are_not_merged_again() -> None:
    res = Resource("", "v1", "pods", "Pod", True)
    [pod] = live_decode(res, POD).pods
    [t] = pod_terms(make_pod_info(pod)).required_affinity
    assert t.selector == LabelSelector((("app", "web"),))


@pytest.mark.parametrize(
    ("term", "message"),
    [
        ({"labelSelector": {}}, "topologyKey: Required value: can not be empty"),
        (
            {"topologyKey": "z", "matchLabelKeys": ["a"]},
            "matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        ),
        (
            {"topologyKey": "z", "labelSelector": {}, "matchLabelKeys": ["a"], "mismatchLabelKeys": ["a"]},
            "mismatchLabelKeys[0]: Invalid value: 'a': exists in both matchLabelKeys and mismatchLabelKeys",
        ),
    ],
)
def test_invalid_terms(term: dict[str, Any], message: str) -> None:
    doc = {
        **POD,
        "spec": {
            "containers": [{"name": "c"}],
            "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        },
    }
    _, errors = _decode(doc)
    path = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
    assert [e.message for e in errors.items if e.path == path + message.split(":")[0]] == [message.split(": ", 1)[1]]


def test_preferred_weight_range() -> None:
    bad = {"weight": 0, "podAffinityTerm": {"topologyKey": "z", "labelSelector": {}}}
    doc = {
        **POD,
        "spec": {
            "containers": [{"name": "c"}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [bad]}},
        },
    }
    _, errors = _decode(doc)
    assert [(e.path, e.message) for e in errors.items] == [
        (
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            "Invalid value: 0: must be in the range 1-100",
        )
    ]
