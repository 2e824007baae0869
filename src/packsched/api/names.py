"""Object names as the API server checks them (k8s.io/apimachinery/pkg/util/validation), with its messages."""

from __future__ import annotations

import re

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = rf"{_DNS1123_LABEL_FMT}(\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE = re.compile(f"^{_DNS1035_LABEL_FMT}$")
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # upstream's RegexError, its doubled space included
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def dns1123_label(value: str) -> list[str]:
    """IsDNS1123Label: namespaces, for one."""
    errs = [] if len(value) <= 63 else ["must be no more than 63 characters"]
    if not _DNS1123_LABEL_RE.match(value):
        errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    """IsDNS1123Subdomain: the names of most kinds (pods, nodes, workloads, priority classes...)."""
    errs = [] if len(value) <= 253 else ["must be no more than 253 characters"]
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label(value: str) -> list[str]:
    """IsDNS1035Label: services."""
    errs = [] if len(value) <= 63 else ["must be no more than 63 characters"]
    if not _DNS1035_LABEL_RE.match(value):
        errs.append(_regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


# The kinds whose names are not DNS subdomains (ValidateNamespaceName, ValidateServiceName).
_NAME_RULES = {"Namespace": dns1123_label, "Service": dns1035_label}


def object_name_errors(kind: str, name: str) -> list[str]:
    """What the API server says of ``metadata.name`` of a ``kind`` object (empty: valid), each message starting
    with ``Invalid value: "<name>": `` as kubectl prints it."""
    check = _NAME_RULES.get(kind, dns1123_subdomain)
    return [f'Invalid value: "{name}": {m}' for m in check(name)]


def namespace_errors(namespace: str) -> list[str]:
    """``metadata.namespace`` of a namespaced object (ValidateNamespaceName)."""
    return [f'Invalid value: "{namespace}": {m}' for m in dns1123_label(namespace)]


def int32_errors(value: int) -> list[str]:
    """A field the API declares int32 (the API server cannot decode a larger number into it)."""
    if INT32_MIN <= value <= INT32_MAX:
        return []
    return [f"Invalid value: {value}: must fit in a 32-bit integer (from {INT32_MIN} to {INT32_MAX})"]
