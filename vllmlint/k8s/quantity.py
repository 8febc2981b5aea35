"""Kubernetes resource quantities (`32Gi`, `500m`, `1e3`, `1.5`, `100M`, `0.5Ki`): the one parser.

The grammar is the API's (k8s.io/apimachinery/pkg/api/resource/quantity.go, "The serialization format"):

    <quantity>        ::= <signedNumber><suffix>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>

Anything else (garbage, `NaN`, `.inf`, a value beyond what an int64 of milli-units holds) is not a
quantity: None, so a rule reading it stays silent instead of raising.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from vllmlint.source.yamlmodel import Node, Scalar

_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE]([+-]?\d{1,4}))?$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
# quantity.go keeps values in an int64 (of up to nano-units when fractional); beyond 2^63 it is not a
# value any field of a real manifest holds.
LIMIT = Decimal(2) ** 63


def parse_quantity(value: Node | str | int | float | None) -> Decimal | None:
    """The exact value of a quantity (`8Gi` -> 8589934592, `500m` -> 0.5), or None when it is not one.

    A YAML number (`nvidia.com/gpu: 1`) is read as written; a bool, NaN, infinity or an absurd value is None.
    """
    if isinstance(value, Node):
        if not isinstance(value, Scalar):
            return None
        if isinstance(value.value, bool) or value.value is None:
            return None
        value = value.value if isinstance(value.value, (int, float)) else value.text
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return None
        number = Decimal(repr(value))
    elif not isinstance(value, str):
        return None
    else:
        match = _QUANTITY.match(value.strip())
        if not match:
            return None
        digits, suffix, exponent = match.groups()
        try:
            number = Decimal(digits)
        except InvalidOperation:
            return None
        if suffix in _BINARY:
            number *= Decimal(2) ** _BINARY[suffix]
        elif suffix in _DECIMAL:
            number = number.scaleb(_DECIMAL[suffix])
        elif exponent is not None:
            if abs(int(exponent)) > 30:
                return None  # 1e400: no field holds that
            number = number.scaleb(int(exponent))
    if not number.is_finite() or abs(number) >= LIMIT:
        return None
    return number


def quantity_int(value: Node | str | int | float | None) -> int | None:
    """A quantity as a whole number, rounded up as `Quantity.Value()` does (bytes, device counts)."""
    number = parse_quantity(value)
    if number is None:
        return None
    return int(number.to_integral_value(rounding="ROUND_CEILING" if number > 0 else "ROUND_FLOOR"))


def int_value(node: Node | None, *, minimum: int | None = None, maximum: int | None = None) -> int | None:
    """An integer field (`replicas: 3`, `periodSeconds: 10`): a YAML int in range, else None (a string,
    a float, a bool, `.inf` in an int field is what the API server rejects)."""
    if not isinstance(node, Scalar) or isinstance(node.value, bool) or not isinstance(node.value, int):
        return None
    if minimum is not None and node.value < minimum or maximum is not None and node.value > maximum:
        return None
    return node.value


def digits_int(text: str) -> int | None:
    """A string of ASCII digits as a number (`"8000"` in a port field); None for anything else: a sign, a
    superscript `²` (which `str.isdigit` accepts and `int` rejects), or more digits than an int64 has."""
    if not text or len(text) > 18 or not text.isascii() or not text.isdigit():
        return None
    return int(text)


__all__ = ["parse_quantity", "quantity_int", "int_value", "digits_int", "LIMIT"]
