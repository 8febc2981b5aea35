"""Label selectors, node-selector terms and Karpenter NodePool requirements: one `Requirement` type.

Kubernetes has one shape for all three (`{key, operator, values}`, and maps of `key: value` that mean
`key In [value]`), read with different semantics by different readers. They are methods of the one type:

- `Requirement.matches(labels)`: a LabelSelector on an object's labels (apimachinery
  pkg/labels/selector.go: `NotIn` and `DoesNotExist` hold when the label is absent; Gt/Lt are not
  label-selector operators and decide nothing there);
- `Requirement.holds_for(values, number=...)`: a node-selector requirement on a node's label, which may be
  spelled several ways and compared case-insensitively (`fold_case`), with `Gt`/`Lt` comparing the label
  as a number (core/v1 NodeSelectorOperator: "the values array must have a single element, which will be
  interpreted as an integer");
- `Requirement.compatible(other)`: whether a pod's requirement and a NodePool's requirement on the same key
  can both hold on one node (False only where they plainly exclude each other).

Everything reads model nodes directly (never `to_python` copies), so a selector made of aliases costs
what it is written as, not what it expands to. Malformed selectors select nothing.
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import Callable, Collection, Iterator
from typing import Mapping as TMapping

from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)

Implicit = Callable[[str, str], bool]


def label_text(node: Node | None) -> str | None:
    """A label key or value as the API stores it: YAML `true` is "true", `null` is "", a number its
    decimal text; None for a mapping or a sequence, which is no label value at all."""
    if node is None:
        return ""
    if not isinstance(node, Scalar):
        return None
    value = node.value
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


@dataclass(frozen=True, eq=False)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()
    node: Node | None = field(default=None, compare=False)  # the expression, or the value of a `key: value` entry
    key_node: Node | None = field(default=None, compare=False)  # the key (of the entry, or the expression's `key`)

    # --- label selector semantics ----------------------------------------------------------------
    def matches(self, labels: TMapping[str, str], implicit: Implicit | None = None) -> bool:
        """Whether an object with `labels` satisfies this LabelSelector requirement. `implicit(key,
        value)` answers for labels a controller adds that the manifest does not show."""
        key = self.key
        if key in labels:
            return self.holds_for((labels[key],), numeric=False, unknown=True)
        if self.operator == IN and implicit is not None and any(implicit(key, v) for v in self.values):
            return True
        return self.holds_for(None, numeric=False, unknown=True)

    # --- node label semantics --------------------------------------------------------------------
    def holds_for(self, present: Collection[str] | None, *, number: float | None = None, fold_case: bool = False,
                  numeric: bool = True, unknown: bool = False) -> bool:
        """Whether a label with one of the spellings `present` (None: the label is absent) satisfies it.

        fold_case: compare In/NotIn values case-insensitively (hardware labels are spelled both ways).
        numeric: evaluate Gt/Lt against `number` (node selectors); else they are unknown operators.
        unknown: the answer for an operator this reader does not evaluate.
        """
        operator = self.operator
        if operator == EXISTS:
            return present is not None
        if operator == DOES_NOT_EXIST:
            return present is None
        if operator in (IN, NOT_IN):
            if present is None:
                hit = False
            elif fold_case:
                hit = bool({v.lower() for v in present} & {v.lower() for v in self.values})
            else:
                hit = any(v in self.values for v in present)
            return hit if operator == IN else not hit
        if operator in (GT, LT) and numeric:
            bound = self.bound
            if number is None or bound is None:
                return False
            return number > bound if operator == GT else number < bound
        return unknown

    @property
    def bound(self) -> float | None:
        """The number of a Gt/Lt requirement (None when it has none, or it is no finite number)."""
        if not self.values:
            return None
        try:
            number = float(self.values[0])
        except ValueError:
            return None
        return number if abs(number) < 2 ** 63 else None  # NaN and infinities fail the comparison

    # --- pod vs NodePool -------------------------------------------------------------------------
    def compatible(self, pool: Requirement) -> bool:
        """Can one node satisfy both this (a pod's) requirement and `pool`'s on the same key? False only
        where they plainly exclude each other; anything not evaluated is taken as compatible."""
        mine, theirs = self.operator, pool.operator
        if mine == IN and theirs == IN and not set(self.values) & set(pool.values):
            return False
        if mine == IN and theirs == NOT_IN and set(self.values) <= set(pool.values):
            return False
        if mine == IN and theirs == DOES_NOT_EXIST:
            return False
        if mine == DOES_NOT_EXIST and theirs in (IN, EXISTS):
            return False
        return True


# --- reading requirements from the model --------------------------------------------------------
def from_map(node: Node | None, *, strict: bool = True) -> list[Requirement] | None:
    """`{key: value}` (matchLabels, nodeSelector, a Service selector) as `key In [value]` requirements.
    A value that is a mapping or a list is malformed: None when `strict`, else that entry is skipped.
    Keys are read by their text, as `Mapping.get` reads them (the first of a repeated key counts)."""
    if node is None:
        return []
    if not isinstance(node, Mapping):
        return None
    result = []
    for key, value_node in node.pairs():
        value = label_text(value_node)
        if value is None:
            if strict:
                return None
            continue
        result.append(Requirement(key, IN, (value,), value_node, node.key_node(key)))
    return result


def expression(node: Node | None, *, default_operator: str = "") -> Requirement | None:
    """One `{key, operator, values}` expression; None when it is not a mapping with a key.
    `values` that is not a list counts as no values."""
    if not isinstance(node, Mapping) or "key" not in node:
        return None
    key = label_text(node.get("key"))
    operator = label_text(node.get("operator")) if "operator" in node else default_operator
    values_node = node.get("values")
    values: list[str] = []
    if isinstance(values_node, Sequence):
        for item in values_node.items:
            text = label_text(item)
            if text is not None:
                values.append(text)
    return Requirement(key if key is not None else "", operator or default_operator, tuple(values), node,
                       node.get("key"))


def expressions(node: Node | None, *, default_operator: str = "") -> list[Requirement]:
    """The well-formed expressions of a list (anything else in it is skipped)."""
    if not isinstance(node, Sequence):
        return []
    found = (expression(item, default_operator=default_operator) for item in node.items)
    return [r for r in found if r is not None]


@dataclass(eq=False)
class LabelSelector:
    """A LabelSelector (matchLabels + matchExpressions) or a plain map selector, read once."""

    match_labels: list[Requirement] = field(default_factory=list)  # `key: value` entries (key In [value])
    match_expressions: list[Requirement] = field(default_factory=list)
    node: Node | None = None
    valid: bool = True  # False: malformed; selects nothing (the API server would reject it)

    @property
    def requirements(self) -> list[Requirement]:
        return self.match_labels + self.match_expressions

    def matches(self, labels: TMapping[str, str], implicit: Implicit | None = None) -> bool:
        """Empty or malformed selects nothing (a Service without selector selects no pods)."""
        if not self.valid or not (self.match_labels or self.match_expressions):
            return False
        return all(r.matches(labels, implicit) for r in self.match_labels) and \
            all(r.matches(labels, implicit) for r in self.match_expressions)

    def first_pair(self, ignore: Collection[str] = ()) -> tuple[str, str] | None:
        """One `(key, value)` label every match must carry (to narrow a search through an index), from the
        `key: value` part; keys in `ignore` (labels controllers add, absent from manifests) never narrow."""
        for requirement in self.match_labels:
            if requirement.key not in ignore:
                return requirement.key, requirement.values[0]
        return None


def label_selector(node: Node | None) -> LabelSelector:
    """The selector at `node`: a LabelSelector when it has matchLabels or matchExpressions, else a plain
    map of labels. Malformed parts (a list where a map belongs, an expression that is no mapping) make
    it select nothing."""
    if not isinstance(node, Mapping) or not node.items:
        return LabelSelector(node=node, valid=False)
    if "matchLabels" not in node and "matchExpressions" not in node:
        plain = from_map(node)
        return LabelSelector(plain or [], [], node, valid=plain is not None)
    labels_node = node.get("matchLabels")
    if isinstance(labels_node, Scalar) and not labels_node.value or \
            isinstance(labels_node, Sequence) and not labels_node.items:
        labels_node = None  # `matchLabels:` (null), `""`, `0`, `[]`: nothing
    match_labels = from_map(labels_node)
    exprs_node = node.get("matchExpressions")
    if match_labels is None or exprs_node is not None and not (isinstance(exprs_node, Sequence) or _null(exprs_node)):
        return LabelSelector(node=node, valid=False)
    match_expressions = []
    for item in _items(exprs_node):
        if not isinstance(item, Mapping):
            return LabelSelector(node=node, valid=False)
        found = expression(item)
        if found is None:  # an expression without a key asks for the label "None", which nothing has
            values = tuple(t for t in (label_text(v) for v in _items(item.get("values"))) if t is not None)
            found = Requirement("None", label_text(item.get("operator")) or "", values, item)
        match_expressions.append(found)
    return LabelSelector(match_labels, match_expressions, node)


def _null(node: Node) -> bool:
    return isinstance(node, Scalar) and node.value is None and node.style is None


def _items(node: Node | None) -> Iterator[Node]:
    return iter(node.items) if isinstance(node, Sequence) else iter(())


__all__ = ["Requirement", "LabelSelector", "label_selector", "from_map", "expression", "expressions", "label_text",
           "IN", "NOT_IN", "EXISTS", "DOES_NOT_EXIST", "GT", "LT", "OPERATORS"]
