"""Every "validation" and "constructorValidation" case of shared/spec/requested-to-capacity-ratio-cases.json.

Current cases run through ``validate_node_resources_fit_args`` (field errors, paths relative to the args,
order checked); the VolumeBindingArgs shape cases through the same shape validator; v1beta1 and legacy v1.16
cases through the first-error validators (exact sentences). Args are decoded without defaulting, as
upstream's tables call the validators directly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from packsched.api.decode import Reader
from packsched.api.errors import ErrorList, FieldError
from packsched.config import args as pluginargs
from packsched.config import (
    legacy_v116_first_error,
    v1beta1_first_error,
    validate_function_shape,
    validate_node_resources_fit_args,
)
from packsched.config.catalog import V1
from packsched.config.types import NodeResourcesFitArgs, ScoringStrategy

# A copy of shared/spec/requested-to-capacity-ratio-cases.json, kept in the repository so CI always has it.
SPEC = Path(__file__).resolve().parents[1] / "data" / "spec" / "requested-to-capacity-ratio-cases.json"
CASES: list[dict[str, Any]] = [
    c for c in json.loads(SPEC.read_text())["cases"] if c["kind"] in ("validation", "constructorValidation")
]

ERROR_TYPES = {
    "FieldValueInvalid": "Invalid value: ",
    "FieldValueRequired": "Required value",
    "FieldValueNotSupported": "Unsupported value: ",
}

V1BETA1_APIS = {
    "RequestedToCapacityRatioArgs": "RequestedToCapacityRatio",
    "NodeResourcesLeastAllocatedArgs": "NodeResourcesLeastAllocated",
    "NodeResourcesMostAllocatedArgs": "NodeResourcesMostAllocated",
}


def _decode_fit(raw: dict[str, Any]) -> NodeResourcesFitArgs:
    errors = ErrorList()
    args = pluginargs.decode_fit_args(Reader(errors), raw, "", V1)
    assert not errors, [str(e) for e in errors.items]
    return args


def _field_errors(case: dict[str, Any]) -> list[FieldError]:
    raw = case["args"]
    if case["kind"] == "constructorValidation":
        # NewFit(args) with the table's strategy and resources (no defaulting on this path).
        errors = ErrorList()
        resources = pluginargs.decode_resources(Reader(errors), raw.get("resources"), "resources")
        assert not errors, [str(e) for e in errors.items]
        return validate_node_resources_fit_args(
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(case["strategy"], resources))
        )
    if case["api"].startswith("VolumeBindingArgs"):
        return validate_function_shape(pluginargs.shape_points(raw.get("shape")), "shape")
    return validate_node_resources_fit_args(_decode_fit(raw))


def _first_error(case: dict[str, Any]) -> str | None:
    raw = case["args"]
    if case["api"] in V1BETA1_APIS:
        return v1beta1_first_error(V1BETA1_APIS[case["api"]], raw)
    assert case["version"].startswith("legacy v1.16")
    return legacy_v116_first_error(raw)


def _is_field_error_case(case: dict[str, Any]) -> bool:
    return bool(case["version"] == "current")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_spec_validation_case(case: dict[str, Any]) -> None:
    # Cases marked uncertain (validate-fit-args-nil-strategy, validate-shape-sorted-message) are checked too:
    # the expectations recorded for them hold for the validator as specified, so none is skipped.
    if _is_field_error_case(case):
        errs = _field_errors(case)
        assert bool(errs) == case["expectError"], [str(e) for e in errs]
        if "errorFields" in case:
            assert [e.path for e in errs] == case["errorFields"]
        if "errorType" in case:
            prefix = ERROR_TYPES[case["errorType"]]
            assert all(e.message.startswith(prefix) for e in errs), [e.message for e in errs]
        if "errorContains" in case:
            assert any(case["errorContains"] in e.message for e in errs), [e.message for e in errs]
    else:
        msg = _first_error(case)
        assert (msg is not None) == case["expectError"], msg
        if "errorEquals" in case:
            assert msg == case["errorEquals"]


def test_every_validation_case_is_covered() -> None:
    assert len(CASES) == 63
    assert {c["kind"] for c in CASES} == {"validation", "constructorValidation"}


def test_full_error_strings() -> None:
    """The complete upstream-style strings (path: detail) for a few of the cases."""
    args = _decode_fit(
        {
            "scoringStrategy": {
                "type": "Invalid",
                "resources": [{"name": "cpu", "weight": 0}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}]
                },
            }
        }
    )
    assert [str(e) for e in validate_node_resources_fit_args(args)] == [
        'scoringStrategy.type: Unsupported value: "Invalid": supported values: "LeastAllocated", '
        '"MostAllocated", '
        '"RequestedToCapacityRatio"',
        "scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]",
        "scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order",
    ]
    no_shape = _decode_fit(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}]}}
    )
    assert [str(e) for e in validate_node_resources_fit_args(no_shape, "args")] == [
        "args.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
        "RequestedToCapacityRatio"
    ]
    groups = _decode_fit({"ignoredResourceGroups": ["example.com/"]})
    assert [e.message for e in validate_node_resources_fit_args(groups)] == [
        "Invalid value: \"example.com/\": resource group name can't contain '/'",
        'Invalid value: "example.com/": name part must be non-empty',
        "Invalid value: \"example.com/\": name part must consist of alphanumeric characters, '-', '_' or "
        "'.', and "
        "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]
