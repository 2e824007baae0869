"""DRA's CEL environment (``packsched.api.dracel``): what an expression sees of a device (driver, attributes and
capacity by domain, the driver's own domain for a bare name), upstream's quantity and semver helpers, compile
errors worded as upstream's with their position, and runtime errors worded as upstream's."""

from __future__ import annotations

from fractions import Fraction

import pytest

from packsched.api import dracel
from packsched.api.dracel import CelDevice, CelRuntimeError, compile_selector, is_semver, split_qualified

GPU = "gpu.example.com"
DEVICE = CelDevice(
    GPU,
    (
        ("model", "string", "a100"),
        ("numa", "int", 1),
        ("healthy", "bool", True),
        ("driverVersion", "version", "2.0.0"),
        ("other.io/firmware", "version", "1.2.3-rc.1"),
    ),
    (("memory", Fraction(2**30)), ("other.io/slots", Fraction(3, 2))),
    allow_multiple_allocations=True,
)


def matches(expression: str, device: CelDevice = DEVICE) -> bool:
    compiled = compile_selector(expression)
    assert compiled.error == "", compiled.error
    return compiled.matches(device)


def runtime_error(expression: str) -> str:
    compiled = compile_selector(expression)
    assert compiled.error == "", compiled.error
    with pytest.raises(CelRuntimeError) as err:
        compiled.matches(DEVICE)
    return str(err.value)


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        (f'device.driver == "{GPU}"', True),
        ('device.driver == "other.example.com"', False),
        (f'device.attributes["{GPU}"].model == "a100"', True),
        (f'device.attributes["{GPU}"].numa == 1', True),
        (f'device.attributes["{GPU}"].numa > 1', False),
        (f'device.attributes["{GPU}"].healthy', True),
        # a name written without a domain belongs to the driver; one with a domain to that domain
        ('device.attributes["other.io"].firmware.isLessThan(semver("1.2.3"))', True),
        (f'"firmware" in device.attributes["{GPU}"]', False),
        # a domain the device does not have is an empty map: has() and `in` work on it
        ('"x" in device.attributes["missing.io"]', False),
        ('has(device.attributes["missing.io"].x)', False),
        (f'has(device.attributes["{GPU}"].model)', True),
        ('device.attributes.exists(d, d == "other.io")', True),
        ("device.allowMultipleAllocations", True),
    ],
)
def test_what_a_selector_sees_of_a_device(expression: str, want: bool) -> None:
    assert matches(expression) is want


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        (f'device.capacity["{GPU}"].memory.compareTo(quantity("1Gi")) == 0', True),
        (f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("1Gi"))', False),
        (f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("1000Mi"))', True),
        (f'device.capacity["{GPU}"].memory.isLessThan(quantity("2Gi"))', True),
        (f'device.capacity["{GPU}"].memory.asInteger() == 1073741824', True),
        (f'device.capacity["{GPU}"].memory.isInteger()', True),
        ('device.capacity["other.io"].slots.isInteger()', False),
        ('device.capacity["other.io"].slots.asApproximateFloat() == 1.5', True),
        ('device.capacity["other.io"].slots.sign() == 1', True),
        ('quantity("-1").sign() == -1 && quantity("0").sign() == 0', True),
        ('device.capacity["other.io"].slots.add(1).compareTo(quantity("2500m")) == 0', True),
        ('device.capacity["other.io"].slots.add(quantity("500m")).asInteger() == 2', True),
        ('device.capacity["other.io"].slots.sub(1).compareTo(quantity("500m")) == 0', True),
        ('device.capacity["other.io"].slots.sub(quantity("2")).sign() == -1', True),
        ('isQuantity("1Gi") && !isQuantity("1 Gi")', True),
    ],
)
def test_quantity_helpers(expression: str, want: bool) -> None:
    assert matches(expression) is want


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', True),
        ('isSemver("1.2.3-rc.1+build.5")', True),
        ('isSemver("1.2")', False),
        ('isSemver("01.2.3")', False),
        (f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("1.9.9"))', True),
        (f'device.attributes["{GPU}"].driverVersion.compareTo(semver("2.0.0")) == 0', True),
        # a release is newer than its pre-releases; pre-release fields: numbers below words, numerically
        (f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("2.0.0-alpha"))', True),
        ('semver("2.0.0-alpha").isLessThan(semver("2.0.0"))', True),
        ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),
        ('semver("1.0.0-2").compareTo(semver("1.0.0-10")) == -1', True),
        ('semver("1.0.0-beta").compareTo(semver("1.0.0-alpha")) == 1', True),
        # build metadata does not count
        ('semver("1.0.0+build.1").compareTo(semver("1.0.0+build.2")) == 0', True),
        ('semver("1.10.0").isGreaterThan(semver("1.9.0"))', True),
    ],
)
def test_semver_helpers(expression: str, want: bool) -> None:
    assert matches(expression) is want


def test_is_semver_and_split_qualified() -> None:
    assert is_semver("1.0.0") and is_semver("1.0.0-rc.1") and not is_semver("v1.0.0")
    assert split_qualified("other.io/slots", GPU) == ("other.io", "slots")
    assert split_qualified("slots", GPU) == (GPU, "slots")


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ("device.driver", "CEL result of type string could not be converted to bool"),
        (f'device.attributes["{GPU}"].numa', "CEL result of type int could not be converted to bool"),
        ("1.5", "CEL result of type double could not be converted to bool"),
        ("[true]", "CEL result of type list could not be converted to bool"),
        ('{"a": true}', "CEL result of type map could not be converted to bool"),
        (f'device.capacity["{GPU}"].memory', "CEL result of type kubernetes.Quantity could not be converted to bool"),
        ('semver("1.0.0")', "CEL result of type kubernetes.Semver could not be converted to bool"),
        (f'device.attributes["{GPU}"].nope == 1', "no such key: nope"),
        ('device.attributes["missing.io"].x == 1', "no such key: x"),
        ("1 / 0 == 1", "division by zero"),
    ],
)
def test_runtime_errors(expression: str, want: str) -> None:
    assert want in runtime_error(expression)


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
        ('device.capacity["other.io"].slots.asInteger() == 1', "cannot convert value to integer"),
        ('quantity("bad") == quantity("1")', "quantities must match the regular expression"),
        ('semver("x") == semver("1.0.0")', "Invalid semver version"),
        ("semver(1) == semver(1)", "Invalid semver version"),
        (f'device.capacity["{GPU}"].memory.compareTo(1) == 0', "no such overload"),
        ('quantity("1").major() == 1', "no such overload"),
    ],
)
def test_a_helper_failing_is_reported_in_upstreams_words(expression: str, want: str) -> None:
    # the helper's own words, without the evaluator's wrapping ("Function 'f' error: Python function ...")
    got = runtime_error(expression)
    assert got.startswith(want)
    assert "Function" not in got and "Check function arguments" not in got


def test_a_runtime_error_is_remembered_per_device() -> None:
    compiled = compile_selector('device.attributes["gpu.example.com"].only == 1')
    with_attr = CelDevice(GPU, (("only", "int", 1),))
    assert compiled.matches(with_attr) is True
    for _ in range(2):  # the second time from the remembered result
        with pytest.raises(CelRuntimeError, match="no such key: only"):
            compiled.matches(DEVICE)


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ("noSuchVar", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')"),
        (
            'device.driver == "a" &&\n  other == 1',
            "compilation failed: ERROR: <input>:2:3: undeclared reference to 'other' (in container '')",
        ),
        ("noSuchFunction(device.driver)", "undeclared reference to 'noSuchFunction'"),
        ("cel.bind(x, 1, x == 1)", "compilation failed: cel.bind is not supported"),
    ],
)
def test_compile_errors(expression: str, want: str) -> None:
    compiled = compile_selector(expression)
    assert want in compiled.error
    assert compiled.program is None


def test_a_syntax_error_says_where() -> None:
    error = compile_selector("device.driver ==").error
    assert error.startswith("compilation failed: ")
    assert "Failed to parse expression" not in error
    assert "<input>:1:17" in error


def test_bound_variables_and_known_functions_compile() -> None:
    assert compile_selector('device.attributes.all(d, d != "x")').error == ""
    assert compile_selector('["a"].map(x, x + "b").exists(y, y == "ab")').error == ""
    assert matches('["a"].map(x, x + "b").exists(y, y == "ab")') is True
    assert matches('device.driver.startsWith("gpu") && size(device.driver) == 15') is True


def test_expressions_compile_once_and_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    first = compile_selector('device.driver == "cached.example.com"')
    assert compile_selector('device.driver == "cached.example.com"') is first
    monkeypatch.setattr(dracel, "_CACHE", {})
    monkeypatch.setattr(dracel, "_CACHE_MAX", 2)
    a = compile_selector("true")
    compile_selector("false")
    assert len(dracel._CACHE) == 2
    compile_selector("1 == 1")  # full: emptied first
    assert list(dracel._CACHE) == ["1 == 1"]
    assert compile_selector("true") is not a
