"""ef.io.deepeval: DeepEval's saved datasets and test cases as ef's RAG samples, and ``ef rag --from deepeval``.

The files are written here as DeepEval's ``EvaluationDataset.save_as`` writes them (deepeval
dataset/dataset.py: json.dump(indent=4) of a list of records; one json.dumps per line with the
lists joined by "|"; csv.writer with a header row and the lists joined by "|"), never copied from it.
"""

from __future__ import annotations

import csv
import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ef.cli import main
from ef.evaluation import evaluate_rag
from ef.io.deepeval import DEEPEVAL_FIELDS, DEEPEVAL_FILE_TYPES, from_deepeval, read_deepeval

# save_as's single-turn record, in its order
KEYS = (
    "input", "actual_output", "expected_output", "retrieval_context", "context", "name", "comments",
    "source_file", "tools_called", "expected_tools", "additional_metadata", "custom_column_key_values",
)
LISTS = ("retrieval_context", "context")


def golden(**given: Any) -> dict[str, Any]:
    return {key: given.get(key) for key in KEYS}


def save_json(path: Path, goldens: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(goldens, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


def _joined(value: Any) -> Any:
    return None if value is None else "|".join(value)


def save_jsonl(path: Path, goldens: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as file:
        for record in goldens:
            record = {key: _joined(value) if key in LISTS else value for key, value in record.items()}
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def save_csv(path: Path, goldens: list[dict[str, Any]], header: tuple[str, ...] = KEYS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        for record in goldens:
            writer.writerow([_joined(record.get(key)) if key in LISTS else record.get(key) for key in header])
    return path


SAVERS = {"json": save_json, "jsonl": save_jsonl, "csv": save_csv}

GOLDENS = [
    golden(input="capital of France?", actual_output="Paris", expected_output="Paris",
           retrieval_context=["Paris is the capital of France."], context=["Paris is the capital of France."]),
    golden(input="largest animal?", actual_output="the blue whale", expected_output="blue whale shark",
           retrieval_context=["Whales are mammals.", "The blue whale is the largest animal."]),
    golden(input="answer?", actual_output="42"),
]
SAMPLES = [
    {"user_input": "capital of France?", "response": "Paris", "retrieved_contexts": ["Paris is the capital of France."],
     "reference": "Paris", "reference_contexts": ["Paris is the capital of France."]},
    {"user_input": "largest animal?", "response": "the blue whale",
     "retrieved_contexts": ["Whales are mammals.", "The blue whale is the largest animal."],
     "reference": "blue whale shark"},
    {"user_input": "answer?", "response": "42"},
]


def test_the_mapping_and_file_types_are_deepevals() -> None:
    assert dict(DEEPEVAL_FIELDS) == {
        "input": "user_input", "actual_output": "response", "retrieval_context": "retrieved_contexts",
        "expected_output": "reference", "context": "reference_contexts",
    }
    assert DEEPEVAL_FILE_TYPES == ("json", "jsonl", "csv")


@pytest.mark.parametrize("file_type", ["json", "jsonl", "csv"])
def test_each_layout_save_as_writes_reads_field_by_field(tmp_path: Path, file_type: str) -> None:
    path = SAVERS[file_type](tmp_path / f"goldens.{file_type}", GOLDENS)
    assert read_deepeval(path) == SAMPLES
    # the layout is told by the content, not the name; file_type names it too
    renamed = path.rename(tmp_path / "goldens.txt")
    assert read_deepeval(renamed) == SAMPLES
    assert read_deepeval(renamed, file_type=file_type) == SAMPLES  # type: ignore[arg-type]


def test_gzip_is_read(tmp_path: Path) -> None:
    plain = save_jsonl(tmp_path / "g.jsonl", GOLDENS)
    packed = tmp_path / "g.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_deepeval(packed) == SAMPLES


def test_empty_lists_and_texts_per_layout(tmp_path: Path) -> None:
    goldens = [golden(input="q", actual_output="", expected_output="", retrieval_context=[], context=[])]
    # json keeps them; jsonl's "" is DeepEval's join of []; csv cannot tell "", [] and None apart: absent
    assert read_deepeval(save_json(tmp_path / "g.json", goldens)) == [
        {"user_input": "q", "response": "", "retrieved_contexts": [], "reference": "", "reference_contexts": []}
    ]
    assert read_deepeval(save_jsonl(tmp_path / "g.jsonl", goldens)) == [
        {"user_input": "q", "response": "", "retrieved_contexts": [], "reference": "", "reference_contexts": []}
    ]
    assert read_deepeval(save_csv(tmp_path / "g.csv", goldens)) == [{"user_input": "q"}]


def test_jsonl_takes_lists_as_arrays_too_and_a_bar_splits_as_in_deepeval(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(
        json.dumps({"input": "q", "retrieval_context": ["a|b", "c"], "context": "x|y"}) + "\n", encoding="utf-8"
    )
    # an array is taken as it is; a joined text is split on every "|", as DeepEval reads it back
    assert read_deepeval(path) == [{"user_input": "q", "retrieved_contexts": ["a|b", "c"],
                                    "reference_contexts": ["x", "y"]}]


def test_csv_cells_stay_text(tmp_path: Path) -> None:
    # pandas, which DeepEval reads csv with, would make these numbers; a RagSample's fields are text
    path = save_csv(tmp_path / "g.csv", [golden(input="1", actual_output="42", expected_output="4.0")])
    assert read_deepeval(path) == [{"user_input": "1", "response": "42", "reference": "4.0"}]


def test_csv_records_are_numbered_by_their_first_line(tmp_path: Path) -> None:
    path = save_csv(tmp_path / "g.csv", [golden(input="two\nlines", actual_output="42"),
                                         golden(input="q", actual_output="a", name="n")])
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    # line 1 the header, lines 2-3 the first record (a quoted cell over two lines), line 4 the second
    assert str(error.value) == (
        f"{path}:4: DeepEval field 'name' holds a value and ef's RAG samples have no field for it; "
        "pass drop_unmapped=True (ef rag: --drop-unmapped) to leave such fields out"
    )
    assert read_deepeval(path, drop_unmapped=True) == [
        {"user_input": "two\nlines", "response": "42"}, {"user_input": "q", "response": "a"}
    ]
    path = save_csv(tmp_path / "g.csv", [golden(input="two\nlines", actual_output="42", comments="c")])
    with pytest.raises(ValueError, match=r"^.*g\.csv:2: DeepEval field 'comments' holds a value"):
        read_deepeval(path)  # the line the record starts on, not the one it ends on


def test_csv_json_cells_that_hold_nothing_are_absent(tmp_path: Path) -> None:
    # save_as writes json.dumps of additional_metadata when it is not None: {} holds nothing
    path = save_csv(tmp_path / "g.csv", [golden(input="q", actual_output="[]", additional_metadata="{}",
                                                tools_called="[]")])
    assert read_deepeval(path) == [{"user_input": "q", "response": "[]"}]


def test_csv_errors(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text("input,actual_output\r\nq,a,extra\r\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*g\.csv:2: 3 cells, but the header on line 1 has 2$"):
        read_deepeval(path)
    path.write_text("input,input\r\nq,a\r\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*g\.csv:1: column 'input' appears twice in the header$"):
        read_deepeval(path)
    path.write_text("input,actual_output\r\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^.*g\.csv: no test cases \(DeepEval's save_as writes at least one\)$"):
        read_deepeval(path)


def test_multi_turn_goldens_are_refused(tmp_path: Path) -> None:
    header = ("scenario", "turns", "expected_outcome", "user_description", "context", "name", "comments",
              "additional_metadata", "custom_column_key_values")
    path = save_csv(tmp_path / "convo.csv", [{"scenario": "a refund", "expected_outcome": "refunded"}], header)
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    assert str(error.value) == (
        f"{path}:2: a multi-turn (conversational) golden ('scenario', 'expected_outcome'): "
        "ef scores single-turn samples, one input and one output"
    )


def test_json_errors_name_the_line_of_the_record_and_the_field(tmp_path: Path) -> None:
    goldens = [golden(input="q1", actual_output="a"), golden(input="q2", context=["ok", 3])]
    path = save_json(tmp_path / "g.json", goldens)
    # indent=4: "[" on line 1, each record 14 lines ("{", 12 keys, "}"): the second starts on line 16
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    assert str(error.value) == f"{path}:16: 'context'[1] must be a str (got number)"
    save_json(path, [golden(input="q1", expected_output=["a"])])
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    assert str(error.value) == f"{path}:2: 'expected_output' must be a str or null (got array)"
    save_json(path, [golden(input="q1", retrieval_context="a|b")])  # json holds lists as arrays, never joined
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    assert str(error.value) == f"{path}:2: 'retrieval_context' must be a list of str or null (got string)"


@pytest.mark.parametrize(("name", "content", "file_type", "message"), [
    ("g.json", b'[\n    {"input": "q"},\n    ["q"]\n]', None,
     "{path}:3: expected a JSON object (a test case), got array"),
    ("g.json", b'[\n    {"input": "q",}\n]', None,
     "{path}:2: malformed JSON: Expecting property name enclosed in double quotes (column 19)"),
    ("g.json", b'{"goldens": []}', "json",
     "{path}: expected a JSON array of test cases, as DeepEval's save_as writes, got object"),
    ("g.json", b"[]", None, "{path}: no test cases (DeepEval's save_as writes at least one)"),
    ("g.json", b'[{"input": "\xff"}]', None, "{path}: not valid UTF-8 (invalid start byte)"),
    ("g.jsonl", b'{"input": "q"}\n\n["q"]\n', None, "{path}:3: expected a JSON object (a test case), got array"),
    ("g.jsonl", b'{"input": "q", "input": "r"}\n', None, "{path}:1: key 'input' appears twice in one object"),
])
def test_json_and_jsonl_layout_errors(
    tmp_path: Path, name: str, content: bytes, file_type: str | None, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError) as error:
        read_deepeval(path, file_type=file_type)  # type: ignore[arg-type]
    assert str(error.value) == message.format(path=path)


def test_fields_deepeval_does_not_have_are_refused_when_they_hold_a_value(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"input": "q", "retreival_context": ["a"]}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        read_deepeval(path, drop_unmapped=True)  # a misspelt field is never dropped
    assert str(error.value) == (
        f"{path}:1: 'retreival_context' is not a field of DeepEval's test cases, and ef cannot map it; the fields "
        "are input, actual_output, retrieval_context, expected_output, context, and name, comments, source_file, "
        "tools_called, expected_tools, additional_metadata, metadata, custom_column_key_values, token_cost, "
        "completion_time, tags, flaky, multimodal, images_mapping, id, mcp_servers, mcp_tools_called, "
        "mcp_resources_called, mcp_prompts_called"
    )
    path.write_text(json.dumps({"input": "q", "retreival_context": None}) + "\n", encoding="utf-8")
    assert read_deepeval(path) == [{"user_input": "q"}]  # it holds nothing: nothing is lost


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "g1"), ("comments", "check"), ("source_file", "a.pdf"), ("additional_metadata", {"k": 1}),
     ("tools_called", [{"name": "search"}]), ("custom_column_key_values", {"team": "x"})],
)
def test_each_unmapped_field_holding_a_value_is_refused_or_dropped_on_request(
    tmp_path: Path, field: str, value: Any
) -> None:
    path = save_json(tmp_path / "g.json", [golden(input="q", actual_output="a", **{field: value})])
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    assert str(error.value) == (
        f"{path}:2: DeepEval field {field!r} holds a value and ef's RAG samples have no field for it; "
        "pass drop_unmapped=True (ef rag: --drop-unmapped) to leave such fields out"
    )
    assert read_deepeval(path, drop_unmapped=True) == [{"user_input": "q", "response": "a"}]


def test_retrieved_context_data_markers_give_ids(tmp_path: Path) -> None:
    # deepeval/dataset/utils.py serialize_retrieval_context: f"deepeval_source={source},deepeval_context={context}"
    marked = ["deepeval_source=a.md,deepeval_context=Paris is big.", "deepeval_source=b.md,deepeval_context=x,y\nz"]
    path = save_json(tmp_path / "g.json", [golden(input="q", retrieval_context=marked)])
    assert read_deepeval(path) == [
        {"user_input": "q", "retrieved_contexts": ["Paris is big.", "x,y\nz"],
         "retrieved_context_ids": ["a.md", "b.md"]}
    ]
    save_json(path, [golden(input="q", retrieval_context=[marked[0], "plain", "plain too"])])
    with pytest.raises(ValueError) as error:
        read_deepeval(path)
    assert str(error.value) == (
        f"{path}:2: 'retrieval_context' mixes passages with a source and passages without (items 1, 2): ef keeps "
        "the sources, as retrieved_context_ids, only when every passage has one; pass drop_unmapped=True "
        "(ef rag: --drop-unmapped) to leave them out"
    )
    assert read_deepeval(path, drop_unmapped=True) == [
        {"user_input": "q", "retrieved_contexts": ["Paris is big.", "plain", "plain too"]}
    ]


def test_bad_arguments(tmp_path: Path) -> None:
    path = save_json(tmp_path / "g.json", GOLDENS)
    with pytest.raises(ValueError, match=r"^'file_type' must be one of \['json', 'jsonl', 'csv'\] or None "
                                         r"\(got 'xlsx'\)$"):
        read_deepeval(path, file_type="xlsx")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'drop_unmapped' must be a bool \(got 'no'\)$"):
        read_deepeval(path, drop_unmapped="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'path' must be a str or os.PathLike path"):
        read_deepeval(None)  # type: ignore[arg-type]


# --- in memory ---------------------------------------------------------------------------------------


@dataclass
class Case:
    """deepeval.test_case.LLMTestCase's attributes (a stand-in: deepeval is not a dependency)."""

    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    retrieval_context: list[Any] | None = None
    context: list[str] | None = None
    name: str | None = None
    tools_called: list[Any] | None = None


@dataclass
class Passage:
    """deepeval.test_case.RetrievedContextData's attributes."""

    context: str
    source: str


def test_objects_convert_field_by_field() -> None:
    cases = [Case(g["input"], g["actual_output"], g["expected_output"], g["retrieval_context"], g["context"])
             for g in GOLDENS]
    assert from_deepeval(cases) == SAMPLES
    assert from_deepeval(iter(GOLDENS)) == SAMPLES  # dicts with save_as's keys; any iterable


def test_objects_with_sources_and_aliases() -> None:
    case = Case("q", "a", retrieval_context=[Passage("Paris is big.", "a.md"), Passage("Lyon.", "b.md")])
    assert from_deepeval([case]) == [{"user_input": "q", "response": "a",
                                      "retrieved_contexts": ["Paris is big.", "Lyon."],
                                      "retrieved_context_ids": ["a.md", "b.md"]}]
    # model_dump(by_alias=True) spells them as DeepEval's API does
    dumped = {"input": "q", "actualOutput": "a", "expectedOutput": "b", "retrievalContext": ["c"], "toolsCalled": None}
    assert from_deepeval([dumped]) == [
        {"user_input": "q", "response": "a", "retrieved_contexts": ["c"], "reference": "b"}
    ]
    with pytest.raises(ValueError, match=r"^test_cases\[0\]: gives DeepEval field 'actual_output' twice "
                                         r"\(as 'actual_output' and 'actualOutput'\)$"):
        from_deepeval([{"input": "q", "actual_output": "a", "actualOutput": "a"}])


def test_a_pydantic_model_is_read_by_its_declared_fields() -> None:
    pydantic = pytest.importorskip("pydantic")

    class TestCase(pydantic.BaseModel):  # the shape of LLMTestCase's fields, trimmed
        input: str
        actual_output: str | None = None
        metadata: dict[str, Any] | None = None
        flaky: bool = False
        answer_language: str | None = None  # a field this reader does not know

    assert from_deepeval([TestCase(input="q", actual_output="a")]) == [{"user_input": "q", "response": "a"}]
    with pytest.raises(ValueError, match=r"^test_cases\[0\]: DeepEval field 'flaky' holds a value"):
        from_deepeval([TestCase(input="q", flaky=True)])
    with pytest.raises(ValueError, match=r"^test_cases\[0\]: 'answer_language' is not a field of DeepEval's test"):
        from_deepeval([TestCase(input="q", answer_language="fr")], drop_unmapped=True)


def test_in_memory_errors() -> None:
    with pytest.raises(TypeError, match=r"^test_cases\[1\]: 'actual_output' must be a str or None \(got int\)$"):
        from_deepeval([Case("q"), Case("q", 42)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^test_cases\[0\]: 'retrieval_context'\[0\] must be a str \(got int\)$"):
        from_deepeval([Case("q", retrieval_context=[1])])
    with pytest.raises(ValueError, match=r"^test_cases\[0\]: DeepEval field 'tools_called' holds a value"):
        from_deepeval([Case("q", tools_called=[{"name": "search"}])])
    with pytest.raises(TypeError, match=r"^'test_cases' must be an iterable of test cases, not a single test case$"):
        from_deepeval(Case("q"))
    with pytest.raises(TypeError, match=r"^'test_cases' must be an iterable of test cases, not a single test case$"):
        from_deepeval({"input": "q"})

    class Dataset:  # EvaluationDataset has no __iter__
        goldens = ()

    with pytest.raises(TypeError, match=r"^'test_cases' must be an iterable of DeepEval test cases \(got Dataset\) "
                                        r"\(an EvaluationDataset: pass its \.test_cases or \.goldens\)$"):
        from_deepeval(Dataset())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^test_cases\[0\] must be a DeepEval test case \(an object with \.input, "
                                        r"or a dict\) \(got str\)$"):
        from_deepeval(["what is 2 + 2?"])

    @dataclass
    class Conversation:
        scenario: str
        turns: list[str]

    with pytest.raises(ValueError, match=r"^test_cases\[0\]: a multi-turn \(conversational\) golden \('scenario', "
                                         r"'turns'\): ef scores single-turn samples"):
        from_deepeval([Conversation("refund", ["hi"])])
    with pytest.raises(ValueError, match=r"^'test_cases' is empty; there is nothing to convert$"):
        from_deepeval([])


# --- through evaluate_rag and ef rag -----------------------------------------------------------------

# by hand, SQuAD-normalised: sample 1 matches exactly; sample 2 'blue whale' against 'blue whale shark' has
# token F1 2*1*(2/3)/(1+2/3) = 0.8, its contexts hold 'blue' and 'whale' of the reference's three tokens
# (2/3) and one of its two contexts shares a token (1/2); sample 3 has no reference and retrieved nothing
EXPECTED = {
    "exact_match": 0.5, "token_f1": (1 + 0.8) / 2, "context_recall": (1 + 2 / 3) / 2,
    "context_precision": (1 + 1 / 2) / 2, "non_empty_rate": 2 / 3,  # of all 3 goldens
}


@pytest.mark.parametrize("file_type", ["json", "jsonl", "csv"])
def test_round_trip_through_evaluate_rag(tmp_path: Path, file_type: str) -> None:
    path = SAVERS[file_type](tmp_path / f"goldens.{file_type}", GOLDENS)
    report = evaluate_rag(read_deepeval(path))
    assert report.metrics == pytest.approx(EXPECTED, rel=0, abs=1e-15)
    assert report.coverage == {"exact_match": 2, "token_f1": 2, "context_recall": 2, "context_precision": 2,
                               "non_empty_rate": 3}


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_ef_rag_from_deepeval(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = save_csv(tmp_path / "goldens.csv", GOLDENS)
    status, out, err = _cli(capsys, "rag", "--from", "deepeval", str(path), "--metrics",
                            "exact_match,token_f1,context_recall,context_precision,non_empty_rate", "--json", "-")
    assert (status, err) == (0, "")
    assert json.loads(out)["metrics"] == pytest.approx(EXPECTED, rel=0, abs=1e-15)
    assert json.loads(out)["n_samples"] == 3


def test_ef_rag_deepeval_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = save_jsonl(tmp_path / "goldens.jsonl", [golden(input="q", actual_output="a", name="g1")])
    assert _cli(capsys, "rag", str(path)) == (2, "", (
        f"ef rag: error: {path}:1: sample has unknown key 'input'; a sample holds only the fields of Ragas' "
        "SingleTurnSample: user_input, retrieved_contexts, reference_contexts, retrieved_context_ids, "
        "reference_context_ids, response, multi_responses, reference, rubrics, persona_name, query_style, "
        "query_length ('input' is DeepEval's: --from deepeval reads its files)\n"
    ))
    assert _cli(capsys, "rag", "--from", "deepeval", str(path)) == (2, "", (
        f"ef rag: error: {path}:1: DeepEval field 'name' holds a value and ef's RAG samples have no field for it; "
        "pass drop_unmapped=True (ef rag: --drop-unmapped) to leave such fields out\n"
    ))
    status, out, _ = _cli(capsys, "rag", "--from", "deepeval", "--drop-unmapped", str(path), "-m", "non_empty_rate",
                          "--json")
    # no retrieval_context: no context retrieved, the spec's non_empty_rate counts the sample as 0
    assert (status, json.loads(out)["metrics"], json.loads(out)["coverage"]) == (
        0, {"non_empty_rate": 0.0}, {"non_empty_rate": 1})
    assert _cli(capsys, "rag", "--drop-unmapped", str(path)) == (
        2, "", "ef rag: error: --drop-unmapped: only with --from deepeval (a Ragas sample has no field to drop)\n"
    )


@pytest.mark.parametrize(("file_type", "kind", "column"), [("json", "a JSON array", 2), ("csv", "a CSV file", 1)])
def test_ef_rag_says_a_deepeval_json_or_csv_file_is_not_json_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, file_type: str, kind: str, column: int
) -> None:
    # The JSON Lines reader fails on line 1 of such a file ('[' or the CSV header): the flag that reads it is named.
    path = SAVERS[file_type](tmp_path / f"goldens.{file_type}", GOLDENS)
    assert _cli(capsys, "rag", str(path)) == (2, "", (
        f"ef rag: error: {path}:1: malformed JSON: Expecting value (column {column}): SAMPLES holds {kind}, not "
        "JSON Lines, as DeepEval's EvaluationDataset.save_as writes one: --from deepeval reads it\n"
    ))


def test_ef_rag_says_a_one_line_deepeval_json_array_is_not_json_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # An array on one line (json.dump without indent) parses as line 1: it said only "expected a JSON
    # object, got array", with no word of --from deepeval.
    path = tmp_path / "goldens.json"
    path.write_text(json.dumps([{"input": "q", "actual_output": "a"}]), encoding="utf-8")
    assert _cli(capsys, "rag", str(path)) == (2, "", (
        f"ef rag: error: {path}:1: expected a JSON object, got array: SAMPLES holds a JSON array, not "
        "JSON Lines, as DeepEval's EvaluationDataset.save_as writes one: --from deepeval reads it\n"
    ))
