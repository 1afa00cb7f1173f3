"""What a report page and its scenario list share: the ids a block's captions and anchors are
made of, a scenario's heading (scenario-list.html) and stat.html's look-up maps.
"""
from __future__ import annotations

from typing import Any

from analysis.model import Run, Scenario
from analysis.vocabulary import RATE_UNIT, closed_load_text, fmt_number, has_closed_loads, plain
from analysis.paths import scenario_url


def block_id(run: Run, scenario: Scenario) -> str:
    """What a block's ids (caption ids, anchors) are made of: the run id, and the scenario's
    when it has one, so that the blocks of several scenarios can share a page."""
    return run.id if scenario.id is None else f"{run.id}-{scenario.id}"


# --- scenarios (issue 11) --------------------------------------------------------------------

def scenario_heading(run: Run, scenario: Scenario) -> dict[str, Any]:
    """What the report's scenario list and a scenario's page say about it: label, description,
    endpoint, nominal service time and offered rates, and where its page is."""
    service = scenario.service_time_ms
    if has_closed_loads(scenario.load_points):
        # issue 23: a closed loop's loads are its connections; it offers no rates
        loads = {"loads_text": ", ".join(closed_load_text(lp) for lp in scenario.load_points)}
    else:
        rates = ", ".join(fmt_number(lp.offered_rate) for lp in scenario.load_points)
        loads = {"rates_text": f"{rates} {RATE_UNIT}"}
    return {"id": scenario.id, "label": scenario.label, "description": scenario.description,
            "endpoint": scenario.endpoint, "service_time_ms": service,
            "service_time_text": "not given" if service is None else f"{plain(service)} ms",
            **loads, "url": scenario_url(run.id, scenario.id)}


# --- stat.html ------------------------------------------------------------------------------

def stat(doc: dict[str, Any]) -> dict[str, Any]:
    """Maps for stat.html's look-ups without `where`: systems and load points by id, and the
    printed value of each environment / load_generator setting by key (cells are looked up in
    the document's `cells`, already keyed by load point and system)."""
    return {"systems": {s["id"]: dict(s) for s in doc["systems"]},
            "load_points": {lp["id"]: dict(lp) for lp in doc["load_points"]},
            "settings": {name: {e["key"]: e["value"] for e in doc[name]}
                         for name in ("environment", "load_generator", "method") if name in doc}}
