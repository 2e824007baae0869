"""The HTML report (``--html FILE`` on the commands, ``packsched report FILE.json``): the page model from every
kind of ``-o json`` document, what ``--html`` adds (history, explain tables) without changing the JSON, and the
page itself in a real headless browser (Debian's chromium through selenium): it loads without console errors, its
charts (Vega-Lite, drawn by the inlined Vega-Embed) render, a filter reduces a table's rows, a pod opens its explain
table; a screenshot is saved. Each chart kind's title, axis titles and units: tests/sim/test_charts.py.

The browser tests need chromium and chromedriver (tests/browser_pages.py); without them they are skipped and say
why (PACKSCHED_REQUIRE_BROWSER=1 makes that a failure instead)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from browser_pages import load, rows, screenshot, sizes
from helpers import write_small_trace
from packsched.api.manifests import load_manifests
from packsched.cli.main import app
from packsched.config import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation, run_simulation
from packsched.sim.htmlreport import BUILDERS, ReportError, build_page, render_html
from packsched.sim.htmlreport.history import _explain_pass, usage_history

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
runner = CliRunner()


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    """The synthetic trace of tests/helpers.py, with published figures for FGD only."""
    return write_small_trace(tmp_path / "trace", published_fgd=True)


def invoke(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def embedded(page: Path) -> dict[str, Any]:
    """The page model a report embeds."""
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="packsched-data">(.*?)</script>', text, re.S)
    assert m is not None
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def figures(model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The embedded charts' Vega-Lite specifications, by title."""
    return {
        c["spec"]["title"]["text"]: c["spec"] for s in model["sections"] if s["type"] == "charts" for c in s["charts"]
    }


def data(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows a chart's specification holds (its one inline data set)."""
    (rows,) = spec["datasets"].values()
    return list(rows)


def assert_self_contained(page: Path) -> None:
    """Nothing to fetch: no external script, style sheet, image or font."""
    text = page.read_text(encoding="utf-8")
    assert "<script src" not in text and "@import" not in text
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', text)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", text)


# -- without a browser ---------------------------------------------------------------------------------------


def test_simulate_html_keeps_the_json_and_adds_history_and_explain_tables(tmp_path: Path) -> None:
    page = tmp_path / "sim.html"
    with_html = invoke("simulate", str(EX / "timeline"), "-o", "json", "--html", str(page))
    plain = invoke("simulate", str(EX / "timeline"), "-o", "json")
    assert json.loads(with_html.stdout) == json.loads(plain.stdout)  # the report does not change the run
    assert_self_contained(page)
    model = embedded(page)
    assert model["schema"] == "packsched.simulate/v1" and model["title"].startswith("packsched simulate")
    kinds = {c["kind"] for s in model["sections"] if s["type"] == "charts" for c in s["charts"]}
    assert {"heatmap", "timeline"} <= kinds
    train = model["pods"]["default/train-0"]
    assert train["explain"]["selected"] == "node-a" and train["explain"]["nodes"]
    assert [e[1] for e in train["events"]][-1] == "completed"
    marks = data(figures(model)["Event timeline"])
    preemptions = [m for m in marks if m["lane"] == "preemption (2)"]
    assert sum(m["n"] for m in preemptions) == 2 and all("preempted default/etl-" in m["tip"] for m in preemptions)


def test_usage_history_ends_where_the_snapshot_ends() -> None:
    cluster = load_manifests([str(EX / "timeline")])
    result = run_simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    usage = usage_history(result.records, result.events, result.snapshot, result.end_time)
    snap = result.snapshot
    assert usage["nodes"] == [n.name for n in snap.nodes]
    cpu = next(layer for layer in usage["layers"] if layer["name"] == "cpu")["values"]
    row = snap.row["cpu"]
    expected = 100.0 * snap.requested[row] / snap.alloc[row]
    assert [v[-1] for v in cpu] == pytest.approx(list(np.round(expected, 1)))
    assert max(v for node in cpu for v in node if v is not None) <= 100.0


def test_explain_tables_are_left_out_when_explaining_changes_the_history() -> None:
    cluster = load_manifests([str(EX / "timeline")])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    # as if the plain run had made another history (a random score plugin drawing differently)
    out = _explain_pass(sim, sim.run, [], ["default/web-0"], lambda: sim.history)
    assert "explain" not in out and "random choices" in out["explain_note"]
    page = build_page(json.loads(invoke("simulate", str(EX / "timeline"), "-o", "json").stdout), out)
    assert "random choices" in page["pods_note"] and "explain" not in page["pods"]["default/web-0"]


def test_usage_history_in_time_buckets_keeps_each_buckets_peak() -> None:
    cluster = load_manifests([str(EX / "timeline")])
    result = run_simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    usage = usage_history(result.records, result.events, result.snapshot, result.end_time, max_cols=3)
    # the run ends at 50m0s (the train pods, in backoff after preempting at 5m0s, are popped from the backoff queue
    # once nothing else is active: SchedulerPopFromBackoffQ; they started at 5m1s before), three buckets of 16m40s
    assert usage["bucketed"] and usage["cols"][0] == "0s-16m40s" and len(usage["cols"]) == 3
    fine = usage_history(result.records, result.events, result.snapshot, result.end_time)
    cpu = {layer["name"]: layer["values"] for layer in usage["layers"]}["cpu"]
    fine_cpu = {layer["name"]: layer["values"] for layer in fine["layers"]}["cpu"]
    assert [row[0] for row in cpu] == [max(row[:2]) for row in fine_cpu]  # 0s and 5m0s fall in the first


def test_report_reads_standard_input_and_refuses_to_overwrite_its_input(tmp_path: Path) -> None:
    text = invoke("simulate", str(EX / "timeline"), "-o", "json").stdout
    result = runner.invoke(app, ["report", "-", "-o", str(tmp_path / "in.html")], input=text)
    assert result.exit_code == 0, result.output
    assert embedded(tmp_path / "in.html")["schema"] == "packsched.simulate/v1"
    saved = tmp_path / "doc.json"
    saved.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["report", str(saved), "-o", str(saved)])
    assert result.exit_code == 2 and "would overwrite the document itself" in result.output
    result = runner.invoke(app, ["report", str(tmp_path / "missing.json")])
    assert result.exit_code == 2 and "cannot read" in result.output


def test_run_html_has_the_scenarios_pods_quotas_and_evictions(tmp_path: Path) -> None:
    page = tmp_path / "run.html"
    with_html = invoke("run", str(EX / "what-if" / "scenario.yaml"), "-o", "json", "--html", str(page))
    plain = invoke("run", str(EX / "what-if" / "scenario.yaml"), "-o", "json")
    assert json.loads(with_html.stdout) == json.loads(plain.stdout)
    model = embedded(page)
    ids = [s["id"] for s in model["sections"]]
    assert {"steps", "step-charts", "placements", "utilisation", "timeline", "events"} <= set(ids)
    marks = data(figures(model)["Event timeline"])
    assert sum(m["n"] for m in marks if m["lane"] == "evicted / deleted (6)") == 6
    assert any(p.get("explain") for p in model["pods"].values())


@pytest.mark.parametrize(
    "args",
    [
        (
            "explain",
            str(EX / "docs-two-node" / "cluster.yaml"),
            "--pod",
            "default/incoming",
            "--config",
            str(EX / "docs-two-node" / "config.yaml"),
        ),
        ("quotas", str(EX / "gpu-quotas"), "--config", str(EX / "gpu-quotas" / "config-spread.yaml")),
        ("run", str(EX / "what-if" / "scenario.yaml")),
        ("simulate", str(EX / "capacity-scheduling-demo")),
    ],
    ids=lambda a: a[0],
)
def test_report_turns_a_saved_document_into_a_page(tmp_path: Path, args: tuple[str, ...]) -> None:
    saved = tmp_path / "doc.json"
    saved.write_text(invoke(*args, "-o", "json").stdout, encoding="utf-8")
    invoke("report", str(saved))
    page = saved.with_suffix(".html")
    assert_self_contained(page)
    model = embedded(page)
    assert model["schema"] == json.loads(saved.read_text(encoding="utf-8"))["schema"]
    assert model["sections"] and all(s["title"] for s in model["sections"])


QUOTA_SCENARIO = """apiVersion: packsched.io/v1alpha1
kind: Scenario
metadata: {{name: quota-change}}
spec:
  base: {base}
  config: {config}
  steps:
  - name: quota1 grows
    at: 90s
    setQuota: {{namespace: quota1, name: quota1, max: {{cpu: 8}}}}
"""


def test_quotas_over_time(tmp_path: Path) -> None:
    demo = EX / "capacity-scheduling-demo"
    page = tmp_path / "sim.html"
    done = invoke("simulate", str(demo), "--config", str(demo / "config.yaml"), "-o", "json", "--html", str(page))
    series = {q["namespace"]: q for q in embedded_quotas(page)}
    final = {p["pod"]: p for p in json.loads(done.stdout)["placements"]}
    running = sum(1 for k, p in final.items() if k.startswith("quota1/") and p["phase"] == "Running")
    assert series["quota1"]["used"][-1] == running * 2  # 2 cores each
    assert series["quota1"]["min"][-1] == 4 and series["quota1"]["max"][-1] == 6
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(QUOTA_SCENARIO.format(base=demo, config=demo / "config.yaml"), encoding="utf-8")
    page = tmp_path / "run.html"
    saved = tmp_path / "run.json"
    saved.write_text(invoke("run", str(scenario), "-o", "json", "--html", str(page)).stdout, encoding="utf-8")
    grows = {q["namespace"]: q for q in embedded_quotas(page)}["quota1"]
    assert grows["max"][0] == 6 and grows["max"][-1] == 8  # setQuota at 90 s
    invoke("report", str(saved))  # from the saved document: min / used / max at the end of each step
    quota_charts = next(s for s in embedded(saved.with_suffix(".html"))["sections"] if s["id"] == "quotas")
    titles = [c["spec"]["title"]["text"] for c in quota_charts["charts"]]
    assert titles == ["quota quota1: cpu", "quota quota2: cpu"]
    maxima = next(r for r in data(quota_charts["charts"][0]["spec"]) if r["label"] == "max")["y"]
    assert maxima == [6, 8]


def embedded_quotas(page: Path) -> list[dict[str, Any]]:
    """The quota charts' data, back in the units of the chart (cores)."""
    out = []
    for section in embedded(page)["sections"]:
        if section["id"] != "quotas":
            continue
        for chart in section["charts"]:
            ns = chart["spec"]["title"]["text"].split("/")[0]
            lines = {r["label"]: r["y"] for r in data(chart["spec"])}
            out.append({"namespace": ns, "used": lines["used"], "min": lines["min"], "max": lines.get("max")})
    return out


def test_more_pages(trace_dir: Path, tmp_path: Path) -> None:
    demo = EX / "gpu-demo"
    page = tmp_path / "whatif.html"
    configs = (
        "--config",
        str(demo / "config-least-allocated.yaml"),
        "--config",
        str(demo / "config-rtcr-binpack.yaml"),
    )
    invoke("compare", str(demo), *configs, "--html", str(page))
    results = next(s for s in embedded(page)["sections"] if s["id"] == "results")
    assert results["rows"][0] == ["pods running at the end", 94, 100]
    invoke("replay", str(trace_dir), "--policy", "FGD", "--seeds", "1-3", "--html", str(tmp_path / "replay.html"))
    model = embedded(tmp_path / "replay.html")
    assert model["title"] == "packsched replay: FGD"
    assert dict((i["label"], i["value"]) for i in model["sections"][0]["items"])["published @100%"] == "5.50 ± 0.50"
    saved = tmp_path / "demo.json"
    saved.write_text(invoke("demo", str(demo), "-o", "json").stdout, encoding="utf-8")
    invoke("report", str(saved), "-o", str(tmp_path / "d.html"), "--title", "GPU demo")
    assert embedded(tmp_path / "d.html")["title"] == "GPU demo"
    verify = {
        "schema": "packsched.verify-record/v1",
        "file": "record.jsonl",
        "record": {"packsched": "0.1.0", "seed": 3, "kubeVersion": "1.31", "config": None, "lines": 6},
        "counts": {"decisions": 2, "identical": 1, "ties": 0, "differences": 1},
        "ties": [],
        "differences": [
            {
                "line": 6,
                "pod": "default/nobody",
                "fields": ["outcome"],
                "recorded": {"outcome": "unschedulable", "node": None, "message": "0/1 nodes are available"},
                "replayed": {"outcome": "unknown", "node": None},
            }
        ],
        "notes": [],
    }
    differences = build_page(verify)["sections"][1]
    assert differences["rows"] == [
        [6, "default/nobody", "outcome", "unschedulable", None, "unknown", None, "0/1 nodes are available"]
    ]


def test_the_pages_field_types_are_the_schemas() -> None:
    """FIELD_TYPES (checked before a page is built) repeats what schemas/ requires of each document's top level."""
    from packsched.sim.htmlreport.page import FIELD_TYPES

    for path in sorted((ROOT / "schemas").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        if schema["properties"]["schema"]["const"] not in BUILDERS:
            continue
        expected = {}
        for name in schema["required"]:
            prop = schema["properties"][name]
            prop = schema["$defs"][prop["$ref"].split("/")[-1]] if "$ref" in prop else prop
            if name != "schema" and "type" in prop:
                expected[name] = tuple(prop["type"]) if isinstance(prop["type"], list) else (prop["type"],)
        assert FIELD_TYPES[schema["properties"]["schema"]["const"]] == expected, path.name


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"schema": "packsched.simulate/v1"}, "packsched.simulate/v1 document without the field 'placements'"),
        ({"schema": "packsched.explain/v1", "pod": None}, "pod: must be string, got null"),
        ({"schema": "packsched.compare/v1", "policies": {"a": 1}}, "policies: must be array, got object"),
        ({"schema": "packsched.replay/v1", "runs": [{}]}, "packsched.replay/v1 document without the field 'seed'"),
    ],
)
def test_report_on_a_malformed_document_names_the_field(tmp_path: Path, doc: dict[str, Any], message: str) -> None:
    """Issue 24: report printed a Python KeyError, or rendered "None" for a field of another type."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = runner.invoke(app, ["report", str(path)])
    assert result.exit_code == 2 and message in result.output, result.output
    assert "KeyError" not in result.output and not (tmp_path / "doc.html").exists()


def test_every_schema_has_a_page_and_bad_documents_are_refused(tmp_path: Path) -> None:
    schemas = {p.name.replace(".schema.json", "") for p in (ROOT / "schemas").glob("*.schema.json")}
    assert {s.removeprefix("packsched.").replace("/", ".") for s in BUILDERS} <= schemas
    for doc in ([], {"schema": "other/v1"}, {"schema": "packsched.simulate/v1"}):
        with pytest.raises(ReportError):
            build_page(doc)
    # a command without a page of its own: its scalars, and a table per list of objects
    generic = build_page({"schema": "packsched.new/v1", "best": {"score": 1.5}, "trials": [{"n": 1, "p": {"w": 2}}]})
    assert generic["sections"][0]["items"] == [{"label": "best.score", "value": 1.5}]
    assert generic["sections"][1]["columns"][1]["key"] == "p.w" and generic["sections"][1]["rows"] == [[1, 2]]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    result = runner.invoke(app, ["report", str(bad)])
    assert result.exit_code == 2 and "not JSON: line 1" in result.output
    bad.write_text('{"schema": "other"}', encoding="utf-8")
    result = runner.invoke(app, ["report", str(bad), "-o", str(tmp_path / "no" / "such" / "r.html")])
    assert result.exit_code == 2 and "does not exist" in result.output
    result = runner.invoke(app, ["simulate", str(EX / "timeline"), "--html", str(tmp_path)])
    assert result.exit_code == 2 and "is a folder" in result.output


def test_text_cannot_close_the_script_element() -> None:
    doc = json.loads(invoke("simulate", str(EX / "timeline"), "-o", "json").stdout)
    doc["warnings"] = ["</script><script>alert(1)</script>"]
    text = render_html(doc)
    # the data, the Vega bundle and the page's script; the data's own escaped as \u003c/script>
    assert text.count("</script>") == 3 and "alert(1)" in text


def test_compare_html_has_curves_and_published_bars_only_where_published(trace_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    invoke(
        "compare", str(trace_dir), "--policies", "FGD,BestFit", "--seeds", "1-2", "--workers", "1", "--html", str(page)
    )
    model = embedded(page)
    charts = figures(model)
    alloc = charts["GPU allocation vs arrived workload"]
    lines = {r["label"]: r for r in data(alloc)}
    assert {"FGD (n=2)", "BestFit (n=2)"} <= set(lines) and len(lines["FGD (n=2)"]["y"]) == 131
    published = [r for r in lines.values() if "published" in r["label"]]
    assert [r["label"] for r in published] == ["FGD, published (Weng et al., ATC '23) mean"]
    assert published[0]["dash"] and published[0]["key"] == "FGD"  # FGD's colour, dashed
    layers = [layer["name"] for layer in alloc["layer"]]
    assert layers.index("dashed") < layers.index("solid")  # ours drawn over the published mean
    caption = " ".join(alloc["title"]["subtitle"])
    assert "2 seeds (1, 2)" in caption and "interquartile" in caption
    bars = charts["Unallocated GPU % at 100% arrived (lower is better)"]
    pub_bars = {r["c"]: r for r in data(bars) if r["g"] == "published (Weng et al., ATC '23)"}
    assert pub_bars["BestFit"]["v"] is None and pub_bars["BestFit"]["note"] == "no published figure"
    assert pub_bars["FGD"]["key"] == "FGD"  # a policy's colour, as in the curves
    assert "± population SD" in " ".join(bars["title"]["subtitle"])


# -- in a browser (tests/sim/conftest.py starts it) -------------------------------------------------------


HEADER_LINES_JS = """
return [...document.querySelectorAll(arguments[0])].map(th => {
  const chars = [];
  const walk = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const text = walk.currentNode;
    for (let i = 0; i < text.length; i++) {
      const r = document.createRange();
      r.setStart(text, i);
      r.setEnd(text, i + 1);
      const box = r.getClientRects()[0];
      chars.push([text.data[i], box ? Math.round(box.top) : null]);
    }
  }
  return chars;
});
"""


def assert_headers_break_between_words(driver: Any, css: str) -> None:
    """Each header's lines (the tops of its characters) break at a space, between the words of a CamelCase name
    (NodeResources|Fit) or after a / or a ., never inside a word; and some do wrap (else nothing was checked)."""
    wrapped = 0
    for chars in driver.execute_script(HEADER_LINES_JS, css):
        text = "".join(c for c, _ in chars)
        for i in range(1, len(chars)):
            (before, top0), (char, top1) = chars[i - 1], chars[i]
            if char == " " or top0 is None or top1 is None or top1 <= top0 + 2:
                continue
            wrapped += 1
            camel = (before.islower() or before.isdigit()) and char.isupper()
            assert before in " /." or camel, f"header {text!r} broken inside a word: {text[:i]!r} | {text[i:]!r}"
    assert wrapped, "no header wrapped: the check saw nothing"


def test_simulate_page_in_a_browser(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = tmp_path / "simulate.html"
    invoke("simulate", str(EX / "timeline"), "--html", str(page))
    load(browser, page)
    plots = sizes(browser, "figure.chart svg.marks")
    assert len(plots) >= 2 and all(w > 100 and h > 50 for w, h in plots)  # the heat map and the timeline
    # 2 nodes x 6 instants (0s, 5m0s, 20m0s, 30m0s, 40m0s, 50m0s)
    assert len(browser.find_elements(By.CSS_SELECTOR, ".chart-heatmap g.cell_marks path")) == 2 * 6
    assert len(browser.find_elements(By.CSS_SELECTOR, ".chart-timeline g.event_marks path")) > 5
    assert rows(browser, "placements") == 12
    box = browser.find_element(By.CSS_SELECTOR, "input.filter[data-table='placements']")
    box.send_keys("etl")
    assert rows(browser, "placements") == 8
    box.send_keys(" node-b")
    assert 0 < rows(browser, "placements") < 8
    box.clear()
    box.send_keys("x")  # clear() does not fire "input": typing does
    box.send_keys("\b")
    assert rows(browser, "placements") == 12
    browser.find_element(By.CSS_SELECTOR, "#placements-table a.pod-link[data-pod='default/train-0']").click()
    WebDriverWait(browser, 5).until(lambda d: d.find_element(By.ID, "pod-panel").is_displayed())
    explain = browser.find_element(By.ID, "explain-table")
    selected = explain.find_elements(By.CSS_SELECTOR, "tr.selected td")
    assert selected and selected[0].text == "node-a"
    assert len(explain.find_elements(By.CSS_SELECTOR, "tbody tr")) == 2
    assert "#pod=default%2Ftrain-0" in browser.current_url
    browser.set_window_size(900, 1000)  # narrow: the plugins' names in the headers wrap
    assert_headers_break_between_words(browser, "#explain-table th")
    browser.set_window_size(1400, 1000)
    screenshot(browser, tmp_path / "simulate-report.png")
    browser.find_element(By.CSS_SELECTOR, "#pod-panel button.close").click()
    assert not browser.find_element(By.ID, "pod-panel").is_displayed()
    screenshot(browser, tmp_path / "simulate-report-page.png")
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_compare_page_in_a_browser(browser: Any, trace_dir: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "compare.html"
    invoke(
        "compare",
        str(trace_dir),
        "--policies",
        "FGD,BestFit,Random",
        "--seeds",
        "1-2",
        "--workers",
        "1",
        "--html",
        str(page),
    )
    load(browser, page)
    plots = sizes(browser, "figure.chart svg.marks")
    assert len(plots) == 5 and all(w > 100 and h > 100 for w, h in plots)
    lines = sizes(browser, "g.solid_marks path, g.dashed_marks path")
    assert len(lines) >= 7 and all(w > 10 for w, _ in lines)  # 3 policies x 2 charts, the published curve
    assert len(browser.find_elements(By.CSS_SELECTOR, "g.bar_marks path")) >= 2 * (3 + 1) + 3
    missing = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "g.missing_marks text")]
    assert missing.count("no published figure") == 4  # BestFit and Random, at 100% and 130%
    assert rows(browser, "runs") == 6
    browser.find_element(By.CSS_SELECTOR, "input.filter[data-table='runs']").send_keys("bestfit")
    assert rows(browser, "runs") == 2
    screenshot(browser, tmp_path / "compare-report.png")
