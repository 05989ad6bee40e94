"""The `calculator` shape: tools that evaluate arithmetic (`calculates`); classes and evidence: docs/tool-use-rules.md.

- `calculator.asked`: a message holding a calculation ("48 x 37", "12 plus 30", "7 fois 6", "15% of 80", a root, a
  quantity asked of two numbers: "Four of us split 187.60: how much each?") reads the table of a tool that
  calculates (`calculates`: one taking numbers or an expression, where one does), is a call down to `NAMED_FLOOR`,
  and names one of the tools that calculate.
- `calculator.operation_named`: where `calculator.asked` acts and the message states one operation
  (`operation_stated`), the name is chosen among the tools that calculate and name it (`says_operation`) or evaluate
  an expression, where some do not; the model is made to write one of them (`Decision.stated`). Where none names
  it, none naming another operation is offered either ("17 hoch 3" is no call of `add`).
- `calculator.operation_as_said`: the call's operation value (an enum, or quoted in its description) naming another
  operation is the first naming the one stated; a percentage of a number said, multiplied by a tool that does not
  say percent, is written as its share ("15% of 380": 0.15).
- `calculator.as_said`: where `calculator.asked` acts and the message states one operation on two numbers ("17.5%
  of 240", "84 divided by 6"), or a sum, a product, a mean of all its numbers, or a power, an expression written
  without one of them or without the operation's sign is that operation as said (`stated`).
- `calculator.folded`: a sum, a product or a mean of more numbers than a tool of two numbers takes (`add(a, b)`)
  goes on after each result with the last result and the next number said, a mean ending with a division by the
  count (`folded`, through the `carry_on` hook).
- `calculator.on_result`: one number and an operation on it ("now divide that by 4", "split that between 5"), right
  after a numeric result (a number, an exact fraction, an equation's result, a JSON object's result or value), is
  read as `calculator.asked`, and a tool's one text parameter is written "<result> <operator> <number>"."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Sequence

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.conversation import Talk
from sidespin.tooluse.decision import Decision, Shape
from sidespin.tooluse.model import Model
from sidespin.tooluse.values import MONTHS, THOUSANDS

__all__ = ["Calculator", "calculates", "asks_calculation", "on_result", "stated", "operation_stated", "says_operation"]

_CALCULATES = re.compile(r"(?i)\b(?:calculat\w*|evaluat\w*|arithmetic|math\w*|expression|comput\w*)\b")
_OPERATION = re.compile(r"(?i)\b(?:add|sum|subtract|minus|multipl\w*|divi\w*|power|exponent\w*|sqrt|root|modulo|"
                        r"remainder|percent\w*|factorial|logarithm|average|mean|median|max|maximum|min|minimum)\b")
_CALCULATION = re.compile(r"(?i)\d[\d.,]*\s*(?:[-+*/×x÷^%]|times|plus|minus|divided by|multiplied by|"
                          r"to the power of|mal|fois|por|más|menos|moins)\s*\(?\s*\d|"
                          r"\d\s*%\s*(?:of|de|von|di|du)\s+\d|"
                          r"(?:square root|sqrt|racine carr[ée]e|ra[íi]z cuadrada|wurzel)"
                          r"\s*(?:of|de|aus|von)?\s*\(?\d")
_QUANTITY = re.compile(r"(?i)\b(?:how (?:much|many)|each|apiece|per (?:person|head|litre|liter|hour|day)|total|sum|"
                       r"adds? up|summe|somme|suma|altogether|average|combien|chacun\w*|en tout|wie ?viel\w*|"
                       r"jede[rsn]?|insgesamt|durchschnitt\w*|cu[áa]nt[oa]s?|cada uno|en total|promedio)\b")  # asked
_NUMERAL = re.compile(r"(?i)(?<![\w.,-])\d+(?:[.,]\d+)?(?![\w-])|\b(?:two|three|four|five|six|seven|eight|nine|ten|"
                      r"eleven|twelve|twenty|thirty|forty|fifty|hundred|dozen|half|deux|trois|quatre|cinq|sept|huit|"
                      r"neuf|dix|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|dos|tres|cuatro|cinco|seis|siete|"
                      r"ocho|nueve|diez)\b")  # a number said alone (not of a file's name), in digits or words
_CALENDAR = re.compile(rf"(?i)\b(?:{MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|lundi|mardi|"
                       r"mercredi|jeudi|vendredi|samedi|dimanche|montag|dienstag|mittwoch|donnerstag|freitag|samstag|"
                       r"sonntag|lunes|martes|miércoles|jueves|viernes|sábado|domingo|christmas|noël|weihnacht\w*|"
                       r"navidad)\b")  # a day of the calendar: date arithmetic, not a calculation
_EXPRESSION = re.compile(r"(?i)expr|formula|equation|calculat|comput|math|arithmetic|sum\b")  # a text to evaluate
_UNARY = re.compile(r"(?i)\b(?:sqrt|root|square|cube|factorial|logarithm|log|abs\w*|negat\w*|reciprocal|percent\w*)\b")
_DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b")
_NUMBER = r"-?\d+(?:\.\d+)?"
_DIGITS = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w,]|\.\d)")  # a number in digits, "2,5" a decimal
_PERCENT_OF = re.compile(r"(?i)\d\s*(?:%|per ?cent|prozent|pour ?cent|por ?ciento)\s*(?:of|de|von|di|du|des)\s+\d")
_NUMERIC = frozenset({"number", "integer"})
_LISTED = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w]|[.,]\d)")  # a number of a list: "14, 18 and 9", "12,5"
# an operation a message states, by its words (four languages) or its sign between numbers; how a tool names it
_STATED = (("root", r"square root|sqrt|racine carr[ée]e|ra[íi]z cuadrada|quadratwurzel|wurzel", r"sqrt|root"),
           ("^", r"to the power|power of|squared|cubed|hoch|puissance|au carr[ée]|au cube|elevado|\d\s*\^\s*\d",
            r"power|pow|exponent\w*"),
           ("mean", r"average|mean|moyenne|durchschnitt\w*|promedio|media", r"average|mean"),
           ("*", r"\d\s*(?:%|per ?cent|prozent|pour ?cent|por ?ciento)\s*(?:of|de|von|du|des)\s+\d|times|multipl\w*|"
                 r"fois|mal|por|\d\s*[x×*]\s*\d", r"multipl\w*|product|times|mul"),
           ("/", r"divi\w*|geteilt|split\w*|share\w*|teil\w*|partag\w*|repart\w*|\d\s*[÷/]\s*\d",
            r"divi\w*|quotient|div"),
           ("+", r"plus|m[áa]s|add\w*|sum|total|altogether|insgesamt|en tout|\d\s*\+\s*\d", r"add\w*|sum|plus"),
           ("-", r"minus|moins|menos|weniger|subtract\w*|take away|\d\s+-\s+\d", r"subtract\w*|minus|difference|sub"))
_RESULT_FIELDS = ("result", "value", "answer", "output", "total")  # where a JSON result gives its number
_OPERATORS = (("/", r"(?:divid\w*|geteilt|divis\w*|split\w*|shar\w*|teil\w*|partag\w*|repart\w*)\b|[÷/]"),
              ("*", r"(?:times|mal|fois|por|multipl\w*)\b|[x×*]"),
              ("+", r"(?:plus|más|add\w*)\b|[+]"), ("-", r"(?:minus|menos|moins|weniger|subtract\w*)\b|[-−]"))


def calculates(tool: Tool, operands: bool = False) -> bool:
    """Whether a tool's name or first sentence says it calculates, or an operation and it requires numbers only (two,
    or a list of them: `product(numbers)`, or one for an operation of one number: not `add_days(days)`); with
    `operands`, it also takes what a calculation gives: numbers only, or one text its name or description calls an
    expression or a formula (not `date_diff(start, end)`, nor `parse_date(description)` for "a date expression")."""
    first = re.split(r"(?<=[.!?:])\s", " ".join(tool.description.split()), maxsplit=1)[0]
    said = f"{tool.name.replace('_', ' ').replace('-', ' ')} {first[:200]}"
    schemas = [tool.parameters.get(name) or {} for name in tool.required]
    kinds = [schema.get("type") for schema in schemas]
    lists = [schema for schema in schemas if schema.get("type") == "array"]  # a list of numbers is several numbers
    numbers = bool(kinds) and all(kind in _NUMERIC or kind == "array" and (s.get("items") or {}).get(
        "type") in _NUMERIC for kind, s in zip(kinds, schemas))
    described = (schemas[0].get("description") or "") if schemas else ""
    choice = bool(schemas and schemas[0].get("enum")) or len(re.findall(r"'[\w-]+'|\"[\w-]+\"", described)) >= 3
    if operands and not (numbers or kinds == ["string"] and not choice and _EXPRESSION.search(
            f"{tool.required[0]} {described}")):  # a text naming one of listed values is a choice, no expression
        return False
    several = len(kinds) > 1 or bool(lists)
    return bool(_CALCULATES.search(said)) or numbers and bool((_OPERATION if several else _UNARY).search(said))


def asks_calculation(text: str) -> bool:
    """Whether a message holds a calculation: an operation on numbers ("48 x 37", "15% of 80", a root), or a quantity
    asked of two numbers or more, in digits or words ("Four of us split a bill of 187.60: how much each?", "wie viel
    zahlt jeder?"). A date ("2025-06-02") is no number; a day of the calendar named ("14 March") makes none."""
    text = _DATE.sub(" ", text)
    return _CALCULATION.search(text) is not None or bool(_QUANTITY.search(text)) and len(_NUMERAL.findall(
        text)) >= 2 and not _CALENDAR.search(text)


def on_result(talk: Talk) -> str | None:
    """The calculation a message asks of the last result ("350 * 12"; a share, "350 * 15 / 100"): one number and an
    operation in it, a number (or an equation's, after "=") from the last call before this turn."""
    value = _value(talk.answered[-1].answer.strip()) if talk.answered and not talk.this_turn else None
    numbers = re.findall(r"\d+(?:[.,]\d+)?", talk.last)
    if value is None or len(numbers) != 1:
        return None
    number = numbers[0].replace(",", ".")
    if re.search(rf"(?i){re.escape(numbers[0])}\s*(?:%|per ?cent|prozent|pour ?cent|por ?ciento)", talk.last):
        return f"{value} * {number} / 100"  # a share of the result: "15 Prozent davon"
    found = [(m.start(), symbol) for symbol, words in _OPERATORS
             for m in [re.search(rf"(?i)(?<!\w)(?:{words})\D{{0,16}}?{re.escape(numbers[0])}", talk.last)] if m]
    return f"{value} {min(found)[1]} {number}" if found else None


def stated(message: str) -> str | None:
    """The operation a message states on its numbers, as an expression: of two numbers ("17.5% of 240": "17.5 * 240 /
    100", "84 divided by 6": "84 / 6", "17 fois 23": "17 * 23", "17 hoch 3": "pow(17, 3)"), or of all it says for a
    sum, a product or a mean ("the average of 14, 18 and 9": "(14 + 18 + 9) / 3"); None where it states none, or holds
    other numbers."""
    numbers = _listed_numbers(message)
    op, values = operation_stated(message), [n.replace(",", ".") for n in numbers]
    if len(values) > 2 or op in ("^", "mean"):
        whole = {"+": " + ".join(values), "*": " * ".join(values), "mean": f"({' + '.join(values)}) / {len(values)}",
                 "^": f"pow({', '.join(values)})" if len(values) == 2 else None}
        return whole.get(op) if op and len(values) >= 2 and not _PERCENT_OF.search(message) else None
    if len(values) != 2:
        return None
    a, b = values
    if _PERCENT_OF.search(message):
        return f"{a} * {b} / 100"
    found = next((symbol for symbol, words in _OPERATORS if re.search(
        rf"(?i){re.escape(numbers[0])}\s*(?:{words})(?:\s+(?:by|par|durch|por|per))?\s*{re.escape(numbers[1])}",
        message)), None)
    return f"{a} {found} {b}" if found else None


def _listed_numbers(message: str) -> list[str]:
    """The numbers a message says in digits, in order ("14, 18 and 9"; "2,000" one number, "12,5" a decimal), dates
    left out."""
    return _LISTED.findall(THOUSANDS.sub("", _DATE.sub(" ", message)))


def _written_as(expression: str, op: str | None) -> bool:
    """Whether an expression holds the sign of operation `op` (a power: `**`, `^` or `pow`; a mean: a division)."""
    signs = {"+": ["+"], "-": ["-"], "*": ["*", "×", "x"], "/": ["/", "÷"], "^": ["**", "^", "pow"], "mean": ["/"],
             "root": ["sqrt", "√", "**", "^", "root"]}
    return op is None or any(sign in expression.lower() for sign in signs.get(op, []))


def operation_stated(message: str) -> str | None:
    """The one operation a message states ("348 times 27": "*", "17 hoch 3": "^", "the average of…": "mean", "15% of
    380": "*", a root: "root"), by its words in four languages or its sign between numbers; None for none or several."""
    text = re.sub(r"(?i)\b(divi\w*|geteilt)\s+(?:por|par|entre|durch)\b", r"\1", _DATE.sub(" ", message))
    found = {op for op, said, _ in _STATED if re.search(rf"(?i)(?<![^\W\d_])(?:{said})(?![^\W\d_])", text)}
    found -= {"*"} if "^" in found else set()  # "to the power" may say times too ("3 times itself")
    return found.pop() if len(found) == 1 else None


def says_operation(tool: Tool, op: str) -> bool:
    """Whether a tool names operation `op` (an `operation_stated`) in its name, its description's first sentence, or
    its required parameters' allowed values and descriptions (`operation: "add" | "multiply" …`)."""
    words = next(names for key, _, names in _STATED if key == op)
    first = re.split(r"(?<=[.!?])\s", " ".join(tool.description.split()), maxsplit=1)[0]
    parameters = [tool.parameters.get(name) or {} for name in tool.required]
    said = " ".join([tool.name.replace("_", " ").replace("-", " "), first[:200], *(
        f"{' '.join(map(str, p.get('enum') or []))} {p.get('description') or ''}" for p in parameters)])
    return re.search(rf"(?i)(?<![a-z])(?:{words})(?![a-z])", said) is not None


def _does(tool: Tool, op: str) -> bool:
    """Whether a tool that calculates does operation `op`: it names it, or evaluates an expression."""
    return calculates(tool) and (says_operation(tool, op) or _evaluates(tool))


def _evaluates(tool: Tool) -> bool:
    """Whether a tool evaluates what is written: it calculates and takes one text, an expression or a formula."""
    return calculates(tool, operands=True) and not all(
        (tool.parameters.get(n) or {}).get("type") in _NUMERIC | {"array"} for n in tool.required)


def _operation_value(tool: Tool, call: ToolCall, op: str) -> ToolCall:
    """`call` with a required text parameter offering operations by name (an enum, or quoted in its description:
    "Supports: 'add', 'multiply'…") set to the first offered value naming `op`, where the value written names another
    or none; else `call` as it is."""
    words = next(names for key, _, names in _STATED if key == op)
    arguments = dict(call.arguments)
    for name in tool.required:
        schema, value = tool.parameters.get(name) or {}, call.arguments.get(name)
        offered = [v for v in schema.get("enum") or re.findall(r"'([\w-]+)'", str(schema.get("description") or ""))
                   if isinstance(v, str)]
        naming = [v for v in offered if re.fullmatch(rf"(?i)(?:{words})", v)]
        if isinstance(value, str) and naming and not re.fullmatch(rf"(?i)(?:{words})", value):
            arguments[name] = naming[0]
    return ToolCall(call.name, arguments, call.id) if arguments != call.arguments else call


def _as_shares(tool: Tool, call: ToolCall, message: str) -> ToolCall:
    """`call` with each number the message says as a percentage of another ("15% of 380": 15) written as its share
    (0.15), for a tool that multiplies and does not say percent; else `call` as it is."""
    said = {float(n.replace(",", ".")) for n in re.findall(
        r"(?i)(\d+(?:[.,]\d+)?)\s*(?:%|per ?cent|prozent|pour ?cent|por ?ciento)\s*(?:of|de|von|du|des)\s+\d", message)}
    if not said or not says_operation(tool, "*") or re.search(r"(?i)percent", f"{tool.name} {tool.description[:200]}"):
        return call

    def share(value: object) -> object:
        plain = isinstance(value, (int, float)) and not isinstance(value, bool)
        return value / 100 if plain and float(value) in said else value  # type: ignore[operator]
    arguments = {k: [share(x) for x in v] if isinstance(v, list) else share(v) for k, v in call.arguments.items()}
    return ToolCall(call.name, arguments, call.id) if arguments != call.arguments else call


def _value(result: str) -> str | None:
    """The number a result gives: itself, an exact fraction ("(4165/2)"), an equation's result ("1250 * 1.08 = 1350.0"),
    or that of a JSON object's result, value or answer field (`{"expression": …, "value": "4165/2"}`); else None."""
    if re.fullmatch(_NUMBER, result):
        return result
    if re.fullmatch(rf"{_NUMBER}/\d+", result):
        return f"({result})"
    with contextlib.suppress(ValueError):
        if isinstance(parsed := json.loads(result), dict):
            field = next((parsed[k] for k in _RESULT_FIELDS if isinstance(parsed.get(k), (int, float, str))
                          and not isinstance(parsed[k], bool)), None)
            if field is not None:
                return _value(str(field).strip())
    equals = re.findall(rf"=\s*({_NUMBER})(?![\d.])", result)
    return equals[0] if len(equals) == 1 else None


def _pair(tool: Tool) -> bool:
    """Whether a tool requires two numbers and nothing else (`add(a, b)`)."""
    return len(tool.required) == 2 and all((tool.parameters.get(n) or {}).get("type") in _NUMERIC
                                           for n in tool.required)


def folded(talk: Talk, tools: Sequence[Tool]) -> ToolCall | None:
    """The next call of a sum, a product or a mean of three numbers or more (two for a mean) that a tool of two
    numbers works out a pair at a time (`calculator.folded`): this turn's calls all of one such tool naming the
    operation (an addition for a mean): the last result with the first number said that no call took (the first call
    two, each later one one), else, for a mean, the last result divided by the count; None where the message states
    no such operation, the results are not numbers, or every number is taken. A number said that counts the others
    ("my 3 scores: 78, 85, 92") is taken as one of them."""
    op, calls = operation_stated(talk.last), talk.this_turn
    numbers = [float(n.replace(",", ".")) for n in _listed_numbers(talk.last)]
    step = "+" if op == "mean" else op
    by_name = {t.name: t for t in tools}
    adder = by_name.get(calls[-1].name) if calls else None
    if step not in ("+", "*") or len(numbers) < (2 if op == "mean" else 3) or adder is None or not _pair(adder) or any(
            c.name != adder.name or c.failed for c in calls) or not says_operation(adder, step):
        return None
    if (value := _value(calls[-1].answer.strip())) is None or not re.fullmatch(_NUMBER, value):
        return None
    left = list(numbers)  # the numbers said that no call has taken: the first call's two, then one a call
    for taken in (v for v in calls[0].arguments.values() if isinstance(v, (int, float)) and not isinstance(v, bool)):
        if float(taken) in left:
            left.remove(float(taken))
    left = left[len(calls) - 1:]
    a, b = adder.required
    if left:
        return ToolCall(adder.name, {a: float(value), b: left[0]})
    divider = next((t for t in tools if t.source == adder.source and _pair(t) and says_operation(t, "/")), None)
    if op == "mean" and divider is not None:
        return ToolCall(divider.name, {divider.required[0]: float(value), divider.required[1]: len(numbers)})
    return None


class Calculator(Shape):
    id = "calculator"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(calculates(tool) for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        rule = "calculator.asked" if asks_calculation(decision.talk.last) else (
            "calculator.on_result" if on_result(decision.talk) else None)
        operands = any(calculates(tool, operands=True) for tool in decision.tools)  # where one takes a calculation's
        op = operation_stated(decision.talk.last) if rule == "calculator.asked" else None
        naming = op is not None and any(_does(t, op) for t in decision.tools)  # the table of one doing it, where one is
        return rule if rule and any(calculates(t, operands) and (not naming or _does(t, op)) for t in tools) else None

    def carry_on(self, decision: Decision) -> ToolCall | None:
        call = folded(decision.talk, decision.tools)
        decision.notes.extend(["calculator.folded"] * bool(call))
        return call

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        chosen = {"calculator.asked", "calculator.on_result"} & set(decision.notes)
        kept = {n: t for n, t in decision.names.items() if calculates(t) or not chosen} or decision.names
        op = operation_stated(decision.talk.last) if "calculator.asked" in chosen else None
        saying = {n: t for n, t in kept.items() if op and _does(t, op)}
        if op and saying and len(saying) < len(kept):  # of the tools that calculate, those naming it or evaluating
            decision.notes.append("calculator.operation_named")
            decision.stated = True
            return saying
        if op and not saying:  # none names it: none naming another operation either ("hoch" is no `add`)
            decision.notes.append("calculator.operation_named")
            return {n: t for n, t in kept.items() if not any(says_operation(t, other) for other, _, _ in _STATED)}
        return kept

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        tool, notes = decision.names[call.name], set(decision.notes)
        if "calculator.asked" in notes and (op := operation_stated(decision.talk.last)):
            stated_call = _as_shares(tool, _operation_value(tool, call, op), decision.talk.last)
            if stated_call != call:
                decision.notes.append("calculator.operation_as_said")
                call = stated_call
        texts = [n for n in tool.required if tool.parameters.get(n, {}).get("type") == "string"]
        if len(texts) != 1:
            return call
        if "calculator.on_result" in notes and (asked := on_result(decision.talk)):
            return ToolCall(call.name, {**call.arguments, texts[0]: asked})
        expression = str(call.arguments.get(texts[0], ""))
        written = {float(n) for n in re.findall(_NUMBER, expression)}
        said = stated(decision.talk.last) if "calculator.asked" in notes and calculates(tool, operands=True) else None
        if said and (not {float(n) for n in re.findall(_NUMBER, said)} <= written  # a number left out, or
                     or not _written_as(expression, operation_stated(decision.talk.last))):  # another operation
            decision.notes.append("calculator.as_said")
            return ToolCall(call.name, {**call.arguments, texts[0]: said})
        return call
