"""Consumable capacity (DRAConsumableCapacity): how much of a device's capacity one allocation takes, and whether
it still fits beside what other allocations of the device take.

A request's ``capacity.requests`` names amounts per capacity of the device. Each capacity of the device is
consumed by every allocation: by the amount requested, rounded up to the capacity's ``requestPolicy`` (the next
multiple of ``validRange.step`` from ``validRange.min``, at least ``min``; the next of the ascending
``validValues``), or, when the request names no amount for it, by the policy's ``default``, else by the whole
capacity. The amount must then satisfy the policy (at most ``validRange.max``, a step multiple, one of the
``validValues``; the default always does), and with what the device's other allocations consume (those already
in claims' ``status.allocation`` and those of the search in progress) stay within the capacity's value. A request
naming a capacity the device does not have does not fit it.

The check applies to every device, including one that does not allow multiple allocations (there it consumes the
whole device and only filters); only a device with ``allowMultipleAllocations`` records what it consumed, as one
share (``shareID``, ``consumedCapacity`` in the result).

Quantities are exact fractions here. Upstream rounds ``validRange`` steps with ``Quantity.Value()`` (whole units,
rounding up) or, from 1.37 with DRAFractionalCapacityRange, in milli units when every bound is a whole number of
milli units; packsched does the same (``fractional``). From 1.37 (``strict``) a request that the arithmetic cannot
represent (finer than milli units on the milli path, above 2^63-1 on the whole path, or rounding up past it) or
a negative amount refuses the whole allocation (:class:`CapacityError`) instead of only the device.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from packsched.api.dra import CapacityPolicy, Device

Amounts = Mapping[str, Fraction]
MAX_INT64 = 2**63 - 1


class CapacityError(Exception):
    """A request that cannot be represented in a capacity's range arithmetic (1.37 aborts the allocation)."""


def _whole(q: Fraction) -> int:
    """Quantity.Value(): rounded up to a whole number (away from zero)."""
    return math.ceil(q) if q >= 0 else math.floor(q)


def _milli(q: Fraction) -> int | None:
    """The value in milli units, or None when that is not exact (upstream safeMilliValue)."""
    m = q * 1000
    return m.numerator if m.denominator == 1 else None


def _use_milli(policy: CapacityPolicy, fractional: bool) -> bool:
    """upstream useMilli: with the gate on, milli arithmetic whenever min, max and step are whole milli units and
    the step at least 1m."""
    if not fractional:
        return False
    for q in (policy.range_min, policy.range_max, policy.range_step):
        if q is not None and _milli(q) is None:
            return False
    return policy.range_step is None or policy.range_step >= Fraction(1, 1000)


def _round_up_range(requested: Fraction, policy: CapacityPolicy, fractional: bool, strict: bool) -> Fraction:
    low = policy.range_min
    assert low is not None
    if requested < low:
        return low
    step = policy.range_step
    if step is None:
        return requested
    if _use_milli(policy, fractional):
        want = _milli(requested)
        if want is None:
            raise CapacityError(
                "capacity request cannot be represented in the device's range arithmetic: request "
                f"{_text(requested)} is not a representable milli value"
            )
        s, m = _milli(step), _milli(low)
        assert s is not None and m is not None
        return Fraction(m + s * -(-(want - m) // s), 1000)
    if strict and requested > MAX_INT64:
        raise CapacityError(
            "capacity request cannot be represented in the device's range arithmetic: request "
            f"{_text(requested)} exceeds MaxInt64"
        )
    want_i, s_i, m_i = _whole(requested), _whole(step), _whole(low)
    rounded = m_i + s_i * -(-(want_i - m_i) // s_i)
    if strict and m_i >= 0 and rounded > MAX_INT64:
        raise CapacityError(
            "capacity request cannot be represented in the device's range arithmetic: rounding request "
            f"{_text(requested)} up to the next step passes MaxInt64"
        )
    return Fraction(rounded)


def _text(q: Fraction) -> str:
    return quantity_text(q)


def quantity_text(q: Fraction) -> str:
    """A quantity as text: whole numbers plain, else in milli, micro or nano units where exact (``1500m``)."""
    if q.denominator == 1:
        return str(q.numerator)
    for suffix, scale in (("m", 1000), ("u", 10**6), ("n", 10**9)):
        scaled = q * scale
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return str(float(q))


def consumed_amount(
    requested: Fraction | None, value: Fraction, policy: CapacityPolicy | None, fractional: bool, strict: bool = True
) -> Fraction:
    """upstream calculateConsumedCapacity: what one allocation takes of a capacity of ``value``."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if policy is None:
        return requested
    if policy.has_range and policy.range_min is not None:
        return _round_up_range(requested, policy, fractional, strict)
    if policy.valid_values:
        return next((v for v in policy.valid_values if requested <= v), requested)
    return requested


def violates(amount: Fraction, policy: CapacityPolicy | None, fractional: bool) -> bool:
    """upstream violatesPolicy: the amount is above ``validRange.max``, off its steps, or not a valid value."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.range_max is not None and amount > policy.range_max:
            return True
        if policy.range_step is not None and policy.range_min is not None:
            if _use_milli(policy, fractional):
                a, s, m = _milli(amount), _milli(policy.range_step), _milli(policy.range_min)
                if a is None or s is None or m is None:
                    return True
            else:
                a, s, m = _whole(amount), _whole(policy.range_step), _whole(policy.range_min)
            return s == 0 or (a - m) % s != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def consumption(
    device: Device, requests: Sequence[tuple[str, Fraction]] | None, fractional: bool, strict: bool = True
) -> dict[str, Fraction]:
    """upstream GetConsumedCapacityFromRequest: per capacity of the device, what the request takes of it."""
    wanted = dict(requests or ())
    policies = dict(device.policies)
    out: dict[str, Fraction] = {}
    for name, value in device.cel.capacity:
        amount = consumed_amount(wanted.get(name), value, policies.get(name), fractional, strict)
        if strict and amount < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        out[name] = amount
    return out


def fits(
    device: Device,
    requests: Sequence[tuple[str, Fraction]] | None,
    allocated: Amounts,
    allocating: Amounts,
    fractional: bool,
    strict: bool = True,
) -> bool:
    """upstream CmpRequestOverCapacity: the request's amounts are valid for the device's policies and fit beside
    ``allocated`` (claims' consumedCapacity) and ``allocating`` (this search's shares) within every capacity."""
    names = {name for name, _value in device.cel.capacity}
    if any(name not in names for name, _amount in requests or ()):
        return False
    taken = consumption(device, requests, fractional, strict)
    policies = dict(device.policies)
    for name, value in device.cel.capacity:
        amount = taken[name]
        if violates(amount, policies.get(name), fractional):
            return False
        if allocated.get(name, Fraction(0)) + amount + allocating.get(name, Fraction(0)) > value:
            return False
    return True
