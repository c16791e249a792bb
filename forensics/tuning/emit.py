"""The tuned values as constants for a harness written in another language (the seed harness is written in Rust)."""

from __future__ import annotations

import json
from typing import Any

from forensics.analyzers.schema import keys


def constants(values: dict[str, Any]) -> dict[str, Any]:
    """CONSTANT_NAME -> value for every key that maps to a harness constant."""
    return {k.constant: values[k.path] for k in keys() if k.constant}


def emit(values: dict[str, Any], lang: str) -> str:
    """Tuned values as harness constants in ``lang`` (json, rust, ts): `forensics tune --emit`."""
    consts = constants(values)
    if lang == "json":
        return json.dumps(consts, ensure_ascii=False, indent=2)
    lines = []
    for name, v in consts.items():
        if lang == "rust":
            lines.append(f"pub const {name}: {_rust_type(v)} = {_rust_value(v)};")
        elif lang == "ts":
            lines.append(f"export const {name} = {json.dumps(v, ensure_ascii=False)};")
        else:
            raise ValueError(f"unknown --emit {lang!r}; choose json, rust or ts")
    return "\n".join(lines)


def _rust_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "usize"
    if isinstance(v, float):
        return "f32"
    if isinstance(v, list):
        return "&[&str]"
    return "&str"


def _rust_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if "." in repr(v) or "e" in repr(v) else f"{v}.0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "&[" + ", ".join(json.dumps(x, ensure_ascii=False) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)
