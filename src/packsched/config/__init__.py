"""Scheduler configuration: KubeSchedulerConfiguration (v1, v1beta3, v1beta2, v1beta1) and the legacy
Policy, decoded strictly, defaulted and converted as kube-scheduler does, validated with every error at its
field path."""

from packsched.config.args import (
    default_preemption_args_errors,
    legacy_v116_first_error,
    shape_first_error,
    v1beta1_args_first_error,
    v1beta1_first_error,
    validate_function_shape,
    validate_node_resources_fit_args,
    weight_map_first_error,
)
from packsched.config.defaults import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DEFAULT_PARALLELISM,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_SCHEDULER_NAME,
)
from packsched.config.lint import lint
from packsched.config.loader import default_config, load_config, load_config_data

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DEFAULT_PARALLELISM",
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_SCHEDULER_NAME",
    "default_config",
    "default_preemption_args_errors",
    "legacy_v116_first_error",
    "lint",
    "load_config",
    "load_config_data",
    "shape_first_error",
    "v1beta1_args_first_error",
    "v1beta1_first_error",
    "validate_function_shape",
    "validate_node_resources_fit_args",
    "weight_map_first_error",
]
