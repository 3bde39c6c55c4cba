#!/usr/bin/env python3
"""Crash-safety driver for Cofre (issue 10). Python 3.11 standard library only.

Drives sandbox Pix in, charge creation, charge payment and withdrawals with many
concurrent clients against a real `cofre serve`, SIGKILLs the server at random moments
and restarts it on the same port, then proves from `cofre ledger verify`, the API, the
database and the clients' own records that:

  * every acknowledged write is there, with the acknowledged value;
  * no unacknowledged write is half there (movement, resource and event, or nothing);
  * nothing is there that no client asked for, and nothing twice;
  * balances equal the movements the clients know of, and the ledger's own postings;
  * every committed event was delivered at least once to the local receiver.

Run through `scripts/crash`, which builds the server first. Exit status 0 only when
no violation was found.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import http.client
import http.server
import itertools
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

COMPANY_CNPJ = "11.222.333/0001-81"
COMPANY_CNPJ_DIGITS = "11222333000181"
EVENTS = [
    "OPENPIX:CHARGE_CREATED",
    "OPENPIX:CHARGE_COMPLETED",
    "OPENPIX:CHARGE_EXPIRED",
    "OPENPIX:TRANSACTION_RECEIVED",
    "OPENPIX:MOVEMENT_CONFIRMED",
]
SEED_VALUE = 1_000_000  # centavos each account receives before the storm
HUGE_WITHDRAWAL = 10**12  # always refused: INSUFFICIENT_FUNDS


def log(msg: str) -> None:
    print(f"[crash {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --------------------------------------------------------------------------- HTTP


class NotSent(Exception):
    """The connection was refused: the request never reached a server."""


class NoAnswer(Exception):
    """The request was (or may have been) sent, but no complete answer came back."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Api:
    def __init__(self, port: int, timeout: float = 20.0):
        self.port = port
        self.timeout = timeout

    def call(self, method: str, path: str, app_id: str | None = None, body=None):
        """One request on a fresh connection. Answers (status, json or None)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            try:
                conn.connect()
            except OSError as e:
                raise NotSent(e) from e
            headers = {"Connection": "close", "Accept-Language": "en"}
            if app_id:
                headers["Authorization"] = app_id
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException) as e:
                raise NoAnswer(e) from e
        finally:
            conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return resp.status, parsed

    def ok(self, method, path, app_id=None, body=None, expect=(200, 201)):
        """For setup and verification: retries while the server is unreachable."""
        for attempt in range(200):
            try:
                status, data = self.call(method, path, app_id, body)
            except (NotSent, NoAnswer):
                time.sleep(0.1)
                continue
            if status in expect:
                return data
            raise RuntimeError(f"{method} {path}: {status} {data}")
        raise RuntimeError(f"{method} {path}: server unreachable")


# ----------------------------------------------------------------------- receiver


class Receiver:
    """The webhook receiver: counts every delivery by x-event-id. With `fail_rate`, it
    answers 503 to that fraction of deliveries, so retries are exercised too."""

    def __init__(self, fail_rate: float, rng: random.Random):
        self.lock = threading.Lock()
        self.received: collections.Counter[str] = collections.Counter()
        self.names: dict[str, str] = {}
        self.first_seen: dict[str, float] = {}  # event id -> epoch ms of the first receipt
        self.refused = 0
        self.bad = []  # deliveries whose header and body disagree
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                event_id = self.headers.get("x-event-id", "")
                with receiver.lock:
                    fail = rng.random() < fail_rate
                    if fail:
                        receiver.refused += 1
                    else:
                        try:
                            body = json.loads(raw)
                        except ValueError:
                            body = {}
                        if body.get("eventId") != event_id or not self.headers.get(
                            "x-webhook-signature"
                        ):
                            receiver.bad.append(event_id)
                        receiver.received[event_id] += 1
                        receiver.first_seen.setdefault(event_id, time.time() * 1000)
                        receiver.names[event_id] = body.get("event", "")
                answer = b"busy" if fail else b"ok"
                self.send_response(503 if fail else 200)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def snapshot(self):
        with self.lock:
            return collections.Counter(self.received), self.refused, list(self.bad)

    def first_receipts(self):
        with self.lock:
            return dict(self.first_seen)


# ------------------------------------------------------------------------- server


class Server:
    """`cofre serve` on a fixed port; killed with SIGKILL and started again."""

    def __init__(self, binary: str, env: dict, port: int, workdir: str):
        self.binary = binary
        self.env = env
        self.port = port
        self.workdir = workdir
        self.log_path = os.path.join(workdir, "server.log")
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.startup_seconds: list[float] = []

    def start(self, timeout: float = 60.0) -> float:
        """Starts the server and waits for /healthz; answers how long that took."""
        began = self.spawn()
        return self.wait_ready(began, timeout)

    def spawn(self) -> float:
        self.starts += 1
        with open(self.log_path, "ab") as f:
            f.write(f"\n===== start {self.starts} at {time.time():.3f} =====\n".encode())
        logf = open(self.log_path, "ab")
        began = time.monotonic()
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--bind", f"127.0.0.1:{self.port}"],
            env=self.env,
            cwd=self.workdir,
            stdout=logf,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        logf.close()
        return began

    def wait_ready(self, began: float, timeout: float) -> float:
        api = Api(self.port, timeout=5)
        while time.monotonic() - began < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"cofre serve exited with {self.proc.returncode} while starting "
                    f"(start {self.starts}); see {self.log_path}"
                )
            try:
                status, _ = api.call("GET", "/healthz")
                if status == 200:
                    took = time.monotonic() - began
                    self.startup_seconds.append(took)
                    return took
            except (NotSent, NoAnswer):
                pass
            time.sleep(0.05)
        raise RuntimeError(f"cofre serve did not answer /healthz within {timeout} s")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


# ----------------------------------------------------------------------- database


class Database:
    def __init__(self, backend: str, url: str, sqlite_path: str | None):
        self.backend = backend
        self.url = url
        self.sqlite_path = sqlite_path

    def rows(self, sql: str, params: tuple = ()) -> list[dict]:
        if self.backend == "sqlite":
            conn = sqlite3.connect(self.sqlite_path, timeout=30)
            try:
                conn.row_factory = sqlite3.Row
                return [dict(r) for r in conn.execute(sql, params).fetchall()]
            finally:
                conn.close()
        assert not params, "psql path takes no parameters"
        out = subprocess.run(
            [
                "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.url, "-c",
                f"SELECT coalesce(json_agg(t), '[]'::json) FROM ({sql}) t",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out)

    def execute(self, sql: str):
        if self.backend == "sqlite":
            conn = sqlite3.connect(self.sqlite_path, timeout=30)
            try:
                conn.execute(sql)
                conn.commit()
            finally:
                conn.close()
        else:
            subprocess.run(["psql", "-X", "-q", self.url, "-c", sql], check=True)


# ------------------------------------------------------------------------ clients


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = collections.Counter()
        self.last_ack = None
        self.max_ack_gap = 0.0  # longest time without any acknowledgement, kills included

    def add(self, key, n=1):
        with self.lock:
            self.c[key] += n
            if key == "acknowledged":
                now = time.monotonic()
                if self.last_ack is not None:
                    self.max_ack_gap = max(self.max_ack_gap, now - self.last_ack)
                self.last_ack = now


class Client(threading.Thread):
    """One integrator: loops over random writes on its campaign account and records
    what it asked for and what it was told."""

    def __init__(self, cid, account, api, stop, stats, values, rng, in_flight):
        super().__init__(daemon=True, name=f"client-{cid}")
        self.cid = cid
        self.account = account  # dict: id, appId, key
        self.api = api
        self.stop = stop
        self.stats = stats
        self.values = values  # shared counter for unique withdrawal values
        self.rng = rng
        self.in_flight = in_flight
        self.seq = 0
        self.pix_ins: list[dict] = []
        self.withdrawals: dict[str, dict] = {}
        self.charges: dict[str, dict] = {}
        self.pays: list[dict] = []
        self.payable: list[str] = []  # acknowledged charges not paid yet
        self.retry: list[str] = []  # unacknowledged charges to create again
        self.retry_withdrawals: list[str] = []  # unacknowledged withdrawals to send again

    def send(self, method, path, body):
        """Answers (outcome, status, body) with outcome acked / refused / error /
        unknown, or None when the connection was refused (nothing was sent)."""
        self.in_flight[self.cid] = True
        try:
            status, data = self.api.call(method, path, self.account["appId"], body)
        except NotSent:
            self.stats.add("not_sent")
            return None
        except NoAnswer as e:
            self.stats.add("sent")
            self.stats.add("unacknowledged")
            # Why: a reset or closed connection (the server died) or a timeout (it hung).
            self.stats.add(f"no_answer:{type(e.__cause__).__name__}")
            return "unknown", None, repr(e.__cause__)
        finally:
            self.in_flight[self.cid] = False
        self.stats.add("sent")
        if 200 <= status < 300:
            self.stats.add("acknowledged")
            return "acked", status, data
        if 400 <= status < 500:
            self.stats.add("refused")
            return "refused", status, data
        self.stats.add("server_errors")
        return "error", status, data

    def run(self):
        while not self.stop.is_set():
            r = self.rng.random()
            if self.retry and r < 0.5:
                self.create_charge(self.retry.pop())
            elif self.retry_withdrawals and r < 0.5:
                self.withdraw(self.retry_withdrawals.pop())
            elif r < 0.30:
                self.pix_in()
            elif r < 0.58:
                self.create_charge(None)
            elif r < 0.75 and self.payable:
                self.pay()
            else:
                self.withdraw()

    def wait_a_little(self):
        time.sleep(self.rng.uniform(0.02, 0.15))

    def pix_in(self):
        self.seq += 1
        tag = f"crash c{self.cid} n{self.seq}"
        value = self.rng.randint(1_000, 50_000)
        res = self.send(
            "POST",
            "/api/v1/sandbox/pix",
            {"pixKey": self.account["key"], "value": value, "payer": {"name": tag}},
        )
        if res is None:
            self.pix_ins.append({"tag": tag, "value": value, "outcome": "not_sent",
                                 "status": None, "account": self.account["id"]})
            return self.wait_a_little()
        outcome, status, data = res
        rec = {"tag": tag, "value": value, "outcome": outcome, "status": status,
               "account": self.account["id"]}
        if outcome == "acked":
            rec["transactionID"] = data["transaction"]["transactionID"]
        self.pix_ins.append(rec)

    def create_charge(self, corr):
        again = corr is not None
        if not again:
            self.seq += 1
            corr = f"crash-c{self.cid}-n{self.seq}"
            self.charges[corr] = {
                "correlationID": corr, "value": self.rng.randint(500, 90_000),
                "account": self.account["id"], "attempts": [], "outcome": None,
            }
        rec = self.charges[corr]
        res = self.send(
            "POST", "/api/v1/charge",
            {"correlationID": corr, "value": rec["value"], "comment": "crash test"},
        )
        if res is None:
            if again:
                self.retry.append(corr)
            elif not rec["attempts"]:
                rec["outcome"] = "not_sent"  # must not exist; the next charge is a new one
            return self.wait_a_little()
        outcome, status, data = res
        rec["attempts"].append({"outcome": outcome, "status": status})
        if outcome == "acked":
            rec["outcome"] = "acked"
            rec["globalID"] = data["charge"]["globalID"]
            rec["transactionID"] = data["charge"]["transactionID"]
            if again:
                # 200: the lost attempt had committed; 201: it had not.
                self.stats.add("charge_retry_found" if status == 200 else "charge_retry_created")
            self.payable.append(corr)
        elif rec["outcome"] != "acked":
            rec["outcome"] = outcome
            if outcome in ("unknown", "error") and not again and self.rng.random() < 0.5:
                self.retry.append(corr)

    def pay(self):
        corr = self.payable.pop(self.rng.randrange(len(self.payable)))
        charge = self.charges[corr]
        res = self.send(
            "POST", f"/api/v1/sandbox/charge/{urllib.parse.quote(corr)}/pay",
            {"payer": {"name": f"crash pay {corr}"}},
        )
        if res is None:
            self.payable.append(corr)  # not sent: pay it another time
            return self.wait_a_little()
        outcome, status, data = res
        rec = {"correlationID": corr, "value": charge["value"], "outcome": outcome,
               "status": status, "account": self.account["id"]}
        if outcome == "acked":
            rec["transactionID"] = data["transaction"]["transactionID"]
        else:
            rec["body"] = data
        self.pays.append(rec)

    def withdraw(self, corr=None):
        again = corr is not None
        if not again:
            self.seq += 1
            corr = f"crash-w{self.cid}-n{self.seq}"
            huge = self.rng.random() < 0.05
            n = next(self.values)
            self.withdrawals[corr] = {
                "correlationID": corr, "value": HUGE_WITHDRAWAL + n if huge else 1_000 + n,
                "huge": huge, "account": self.account["id"], "attempts": [], "outcome": None,
            }
        rec = self.withdrawals[corr]
        res = self.send(
            "POST", f"/api/v1/account/{self.account['id']}/withdraw",
            {"value": rec["value"], "correlationID": corr},
        )
        if res is None:
            if again:
                self.retry_withdrawals.append(corr)
            elif not rec["attempts"]:
                rec["outcome"] = "not_sent"
            return self.wait_a_little()
        outcome, status, data = res
        rec["attempts"].append({"outcome": outcome, "status": status})
        if outcome == "acked":
            rec["outcome"] = "acked"
            rec["endToEndId"] = data["transaction"]["endToEndId"]
            if again:
                self.stats.add("withdraw_retry_acked")
        elif rec["outcome"] != "acked":
            # A retry refused for funds says nothing of the first attempt: keep "unknown".
            if not (again and outcome == "refused"):
                rec["outcome"] = outcome
            rec["body"] = data
            if outcome in ("unknown", "error") and not again and self.rng.random() < 0.5:
                self.retry_withdrawals.append(corr)


# ------------------------------------------------------------------------- killer


class Killer(threading.Thread):
    def __init__(self, server, kills, up, down, rng, in_flight, stop, errors, startup_rate):
        super().__init__(daemon=True, name="killer")
        self.server = server
        self.kills = kills
        self.up = up
        self.down = down
        self.rng = rng
        self.in_flight = in_flight
        self.stop = stop
        self.errors = errors
        self.startup_rate = startup_rate
        self.startup_kills = 0
        self.done = 0
        self.in_flight_at_kill: list[int] = []
        self.downtime: list[float] = []
        self.finished = threading.Event()

    def run(self):
        try:
            while self.done < self.kills and not self.stop.is_set():
                if self.stop.wait(self.rng.uniform(*self.up)):
                    break
                busy = sum(1 for v in self.in_flight.values() if v)
                began = time.monotonic()
                self.server.kill()
                self.done += 1
                self.in_flight_at_kill.append(busy)
                time.sleep(self.rng.uniform(*self.down))
                if self.rng.random() < self.startup_rate:
                    # Once more while it starts: connecting, migrating, binding.
                    self.server.spawn()
                    time.sleep(self.rng.uniform(0.0, 0.4))
                    self.server.kill()
                    self.startup_kills += 1
                try:
                    took = self.server.start()
                except RuntimeError as e:
                    self.errors.append(f"restart after kill {self.done} failed: {e}")
                    # One more try, so the run can still be verified.
                    took = self.server.start()
                self.downtime.append(time.monotonic() - began)
                log(f"kill {self.done}/{self.kills}: {busy} requests in flight; "
                    f"up again in {took:.2f} s")
        except Exception as e:  # noqa: BLE001 (recorded as a violation)
            self.errors.append(f"killer: {e!r}")
        finally:
            self.finished.set()


# ------------------------------------------------------------------------ checker


class Checker:
    def __init__(self):
        self.violations: list[str] = []

    def fail(self, msg: str):
        if len(self.violations) < 10_000:
            self.violations.append(msg)


def parse_json(text):
    try:
        return json.loads(text) if isinstance(text, str) else (text or {})
    except ValueError:
        return {}


def verify(ctx, clients, receiver, db, api, server, args, sabotage) -> dict:
    chk = Checker()
    company = ctx["companyId"]
    accounts = {a["id"]: a for a in ctx["accounts"]}

    pix_ins = [r for c in clients for r in c.pix_ins]
    withdrawals = [r for c in clients for r in c.withdrawals.values()]
    charges = {k: v for c in clients for k, v in c.charges.items()}
    pays = [r for c in clients for r in c.pays]

    if sabotage == "half-movement":
        # A movement whose event went missing: what a change committed without its
        # outbox row would look like.
        last = db.rows(
            "SELECT e.id FROM events e WHERE e.event = 'OPENPIX:TRANSACTION_RECEIVED' "
            f"AND e.company_id = '{company}' ORDER BY e.created_at DESC LIMIT 1"
        )[0]["id"]
        db.execute(f"DELETE FROM delivery_attempts WHERE delivery_id IN "
                   f"(SELECT id FROM deliveries WHERE event_id = '{last}')")
        db.execute(f"DELETE FROM deliveries WHERE event_id = '{last}'")
        db.execute(f"DELETE FROM events WHERE id = '{last}'")
    if sabotage == "postings":
        # One centavo moved between two movements' postings: every transaction still sums
        # to zero and every balance still equals its postings, so only the match of
        # postings to movements can see it.
        a, b = db.rows(
            "SELECT id, account_id FROM ledger_transactions WHERE kind = 'PIX_IN' "
            f"AND account_id = '{ctx['accounts'][0]['id']}' ORDER BY id LIMIT 2"
        )
        for txn, delta in ((a["id"], 1), (b["id"], -1)):
            db.execute(f"UPDATE ledger_postings SET amount = amount + ({delta}) "
                       f"WHERE transaction_id = '{txn}' AND ledger_account LIKE '%:available'")
            db.execute(f"UPDATE ledger_postings SET amount = amount - ({delta}) "
                       f"WHERE transaction_id = '{txn}' AND ledger_account = 'world:pix'")
    if sabotage == "phantom-ack":
        # A write the clients believe acknowledged that no server ever saw.
        pix_ins.append({"tag": "crash sabotage", "value": 1234, "outcome": "acked",
                        "status": 200, "account": ctx["accounts"][0]["id"],
                        "transactionID": "txn_sabotage"})

    # ---- 1. the ledger's own invariants
    if sabotage == "balance":
        db.execute(
            "UPDATE account_balances SET available = available + 1 "
            f"WHERE account_id = '{ctx['accounts'][0]['id']}'"
        )
    verify_run = subprocess.run(
        [args.binary, "ledger", "verify", "--json"],
        env=server.env, cwd=server.workdir, capture_output=True, text=True,
    )
    ledger_report = parse_json(verify_run.stdout.strip().splitlines()[-1]
                               if verify_run.stdout.strip() else "{}")
    if verify_run.returncode != 0:
        chk.fail(f"cofre ledger verify exited {verify_run.returncode}: "
                 f"{verify_run.stdout.strip()} {verify_run.stderr.strip()[-500:]}")

    # ---- the database as it is
    txns = db.rows(
        "SELECT id, account_id, kind, value, end_to_end_id, charge_id, counterparty, correlation_id "
        f"FROM ledger_transactions WHERE company_id = '{company}'"
    )
    db_charges = db.rows(
        "SELECT id, account_id, correlation_id, status, value, payment_id "
        f"FROM charges WHERE company_id = '{company}'"
    )
    events = db.rows(
        f"SELECT id, event, payload, created_at FROM events WHERE company_id = '{company}'"
    )
    deliveries = db.rows(
        f"SELECT id, event_id, status, attempts FROM deliveries WHERE company_id = '{company}'"
    )
    postings = db.rows(
        "SELECT p.transaction_id, p.ledger_account, p.amount FROM ledger_postings p "
        f"JOIN ledger_transactions t ON t.id = p.transaction_id WHERE t.company_id = '{company}'"
    )
    orphans = db.rows(
        "SELECT COUNT(*) AS n FROM ledger_postings p "
        "WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = p.transaction_id)"
    )[0]["n"]
    if orphans:
        chk.fail(f"{orphans} postings belong to no transaction")
    balances = {
        r["account_id"]: r
        for r in db.rows("SELECT account_id, available, blocked FROM account_balances")
    }

    by_tag = collections.defaultdict(list)
    withdraw_by = collections.defaultdict(list)
    payment_of = collections.defaultdict(list)
    for t in txns:
        t["counterparty"] = parse_json(t["counterparty"])
        if t["kind"] == "PIX_IN" and t["charge_id"] is None:
            by_tag[t["counterparty"].get("name")].append(t)
        elif t["kind"] == "PIX_IN":
            payment_of[t["charge_id"]].append(t)
        elif t["kind"] == "PIX_OUT":
            withdraw_by[t["correlation_id"]].append(t)
        else:
            chk.fail(f"unexpected movement {t['kind']} {t['id']}")
    # Each movement's postings are exactly its value, on the right sides.
    posted = collections.defaultdict(dict)
    for p in postings:
        posted[p["transaction_id"]][p["ledger_account"]] = (
            posted[p["transaction_id"]].get(p["ledger_account"], 0) + p["amount"])
    for t in txns:
        sign = {"PIX_IN": 1, "PIX_OUT": -1}.get(t["kind"], 0)
        want = {f"{t['account_id']}:available": sign * t["value"], "world:pix": -sign * t["value"]}
        if posted.get(t["id"]) != want:
            chk.fail(f"movement {t['id']} ({t['kind']} {t['value']}) has postings {posted.get(t['id'])}")
    charge_by_corr = {c["correlation_id"]: c for c in db_charges}
    charge_by_id = {c["id"]: c for c in db_charges}

    # What the clients know happened, per account (centavos).
    expected = {a: SEED_VALUE for a in accounts}
    landed = collections.Counter()

    # ---- 2. Pix in to a key (identified by the payer name each client wrote)
    seen_tags = {"crash seed"}
    for r in pix_ins:
        found = by_tag.get(r["tag"], [])
        seen_tags.add(r["tag"])
        if len(found) > 1:
            chk.fail(f"pix-in {r['tag']!r} recorded {len(found)} times")
        if r["outcome"] == "acked":
            if len(found) != 1:
                chk.fail(f"acknowledged pix-in {r['tag']!r} ({r['transactionID']}) is missing")
                continue
            t = found[0]
            if (t["id"], t["value"], t["account_id"]) != (r["transactionID"], r["value"], r["account"]):
                chk.fail(f"acknowledged pix-in {r['tag']!r} differs: {t} vs {r}")
            expected[r["account"]] += r["value"]
        elif r["outcome"] in ("refused", "not_sent"):
            if found:
                chk.fail(f"pix-in {r['tag']!r} ({r['outcome']}) was recorded")
            if r["outcome"] == "refused":
                chk.fail(f"pix-in {r['tag']!r} refused unexpectedly: {r['status']}")
        else:
            if found:
                t = found[0]
                if (t["value"], t["account_id"]) != (r["value"], r["account"]):
                    chk.fail(f"unacknowledged pix-in {r['tag']!r} landed differently: {t}")
                expected[r["account"]] += t["value"]
                landed["pix_in"] += 1
            else:
                landed["pix_in_absent"] += 1
    for tag, found in by_tag.items():
        if tag not in seen_tags:
            chk.fail(f"pix-in {tag!r} that no client sent: {[t['id'] for t in found]}")

    # ---- 3. withdrawals (by correlationID; their values are unique too)
    asked = set()
    for r in withdrawals:
        corr = r["correlationID"]
        asked.add(corr)
        found = withdraw_by.get(corr, [])
        if len(found) > 1:
            chk.fail(f"withdrawal {corr} recorded {len(found)} times")
        if found and (found[0]["value"], found[0]["account_id"]) != (r["value"], r["account"]):
            chk.fail(f"withdrawal {corr} landed differently: {found[0]}")
        if r["outcome"] == "acked":
            if len(found) != 1 or found[0]["end_to_end_id"] != r["endToEndId"]:
                chk.fail(f"acknowledged withdrawal {corr} ({r['endToEndId']}) is missing")
                continue
            expected[r["account"]] -= r["value"]
        elif r["outcome"] in ("refused", "not_sent"):
            if found:
                chk.fail(f"withdrawal {corr} ({r['outcome']}) was recorded")
            if r["outcome"] == "refused" and not (r["huge"] and r["attempts"][-1]["status"] == 400):
                chk.fail(f"withdrawal {corr} refused unexpectedly: {r['attempts']} {r.get('body')}")
        else:
            if found:
                expected[r["account"]] -= r["value"]
                landed["withdraw"] += 1
            else:
                landed["withdraw_absent"] += 1
    for corr, found in withdraw_by.items():
        if corr not in asked:
            chk.fail(f"withdrawal {corr} that no client asked for: {[t['id'] for t in found]}")
    values = collections.Counter((t["account_id"], t["value"]) for t in txns if t["kind"] == "PIX_OUT")
    for key, n in values.items():
        if n > 1:
            chk.fail(f"{n} withdrawals of {key[1]} from {key[0]}, whose values are unique")

    # ---- 4. charges (by correlationID)
    for corr, r in charges.items():
        c = charge_by_corr.get(corr)
        if r["outcome"] == "acked":
            if c is None:
                chk.fail(f"acknowledged charge {corr} is missing")
                continue
            if (c["value"], c["account_id"]) != (r["value"], r["account"]):
                chk.fail(f"acknowledged charge {corr} differs: {c}")
        elif r["outcome"] == "refused":
            if c is not None:
                chk.fail(f"refused charge {corr} exists")
            chk.fail(f"charge {corr} refused unexpectedly: {r['attempts']}")
        elif r["outcome"] == "not_sent":
            if c is not None:
                chk.fail(f"charge {corr} exists though its request was never sent")
        elif c is not None:
            landed["charge"] += 1
            if (c["value"], c["account_id"]) != (r["value"], r["account"]):
                chk.fail(f"unacknowledged charge {corr} landed differently: {c}")
        else:
            landed["charge_absent"] += 1
    for corr in charge_by_corr:
        if corr not in charges:
            chk.fail(f"charge {corr} that no client created")

    # ---- 5. payments of charges
    paid_attempted = set()
    for r in pays:
        corr = r["correlationID"]
        paid_attempted.add(corr)
        c = charge_by_corr.get(corr)
        if c is None:
            chk.fail(f"paid charge {corr} is missing")
            continue
        found = payment_of.get(c["id"], [])
        complete = c["status"] == "COMPLETED" and c["payment_id"] is not None and len(found) == 1 \
            and found[0]["id"] == c["payment_id"] and found[0]["value"] == c["value"]
        untouched = c["status"] == "ACTIVE" and c["payment_id"] is None and not found
        if r["outcome"] == "acked":
            if not complete or found[0]["id"] != r["transactionID"]:
                chk.fail(f"acknowledged payment of {corr} is not complete: {c}, {found}")
                continue
            expected[r["account"]] += r["value"]
        elif r["outcome"] == "refused":
            chk.fail(f"payment of {corr} refused unexpectedly: {r['status']} {r.get('body')}")
        elif complete:
            expected[r["account"]] += c["value"]
            landed["pay"] += 1
        elif untouched:
            landed["pay_absent"] += 1
        else:
            chk.fail(f"unacknowledged payment of {corr} is half there: {c}, {found}")
    for c in db_charges:
        if c["correlation_id"] not in paid_attempted and (
            c["status"] != "ACTIVE" or c["payment_id"] or payment_of.get(c["id"])
        ):
            chk.fail(f"charge {c['correlation_id']} changed without a payment: {c}")
    for charge_id, found in payment_of.items():
        if charge_id not in charge_by_id or len(found) != 1:
            chk.fail(f"payment movements of charge {charge_id}: {[t['id'] for t in found]}")

    # ---- 6. every change has exactly its events, and every event its change
    need = collections.Counter()
    for t in txns:
        if t["kind"] == "PIX_IN":
            need[("OPENPIX:TRANSACTION_RECEIVED", t["id"])] += 1
        elif t["kind"] == "PIX_OUT":
            need[("OPENPIX:MOVEMENT_CONFIRMED", t["id"])] += 1
    for c in db_charges:
        need[("OPENPIX:CHARGE_CREATED", c["correlation_id"])] += 1
        if c["status"] == "COMPLETED":
            need[("OPENPIX:CHARGE_COMPLETED", c["correlation_id"])] += 1
    have = collections.Counter()
    for e in events:
        p = parse_json(e["payload"])
        if e["event"] in ("OPENPIX:TRANSACTION_RECEIVED",):
            subject = p.get("pix", {}).get("transactionID")
        elif e["event"] == "OPENPIX:MOVEMENT_CONFIRMED":
            subject = p.get("movement", {}).get("transactionID")
        else:
            subject = p.get("charge", {}).get("correlationID")
        have[(e["event"], subject)] += 1
    for k in set(need) | set(have):
        if need[k] != have[k]:
            chk.fail(f"event {k[0]} for {k[1]}: {have[k]} committed, {need[k]} expected")

    # ---- 7. deliveries: one per event, each DELIVERED; the receiver saw every one
    received, refused_by_receiver, bad = receiver.snapshot()
    if sabotage == "lost-delivery" and events:
        received.pop(events[0]["id"], None)
    per_event = collections.Counter(d["event_id"] for d in deliveries)
    statuses = collections.Counter(d["status"] for d in deliveries)
    event_ids = {e["id"] for e in events}
    for e in events:
        if per_event[e["id"]] != 1:
            chk.fail(f"event {e['id']} has {per_event[e['id']]} deliveries")
        if received[e["id"]] < 1:
            chk.fail(f"event {e['id']} ({e['event']}) was never delivered")
    for d in deliveries:
        if d["status"] != "DELIVERED":
            chk.fail(f"delivery {d['id']} is {d['status']} after {d['attempts']} attempts")
    for event_id in received:
        if event_id not in event_ids:
            chk.fail(f"the receiver got event {event_id}, which was never committed")
    for event_id in bad:
        chk.fail(f"delivery of {event_id}: x-event-id and body disagree, or no signature")

    # ---- 8. balances: the API, the balance rows and the clients' arithmetic agree
    for account_id, a in accounts.items():
        want = expected[account_id] + (1 if sabotage == "balance-off" else 0)
        body = api.ok("GET", f"/api/v1/account/{account_id}", a["appId"])
        b = body["account"]["balance"]
        row = balances.get(account_id, {})
        got = (b["available"], b["blocked"], b["total"], row.get("available"), row.get("blocked"))
        if got != (want, 0, want, want, 0):
            chk.fail(f"balance of {account_id}: API/rows {got}, clients expect {want}")

    # ---- 9. every acknowledged write read back through the API
    reads = []
    for r in pix_ins:
        if r["outcome"] == "acked":
            reads.append((r, f"/api/v1/transaction/{r['transactionID']}", "transaction", r["value"], None))
    for r in withdrawals:
        if r["outcome"] == "acked":
            reads.append((r, f"/api/v1/transaction/{r['endToEndId']}", "transaction", r["value"], None))
    paid_ok = {r["correlationID"] for r in pays if r["outcome"] == "acked"}
    for corr, r in charges.items():
        if r["outcome"] == "acked":
            status = "COMPLETED" if corr in paid_ok else None
            reads.append((r, f"/api/v1/charge/{urllib.parse.quote(corr)}", "charge", r["value"], status))
    app_of = {a["id"]: a["appId"] for a in ctx["accounts"]}

    def read(item):
        r, path, key, value, status = item
        s, body = api.call("GET", path, app_of[r["account"]])
        if s != 200:
            return f"GET {path}: {s} for an acknowledged write"
        got = body.get(key, {})
        if got.get("value") != value or (status and got.get("status") != status):
            return f"GET {path}: {got.get('value')}/{got.get('status')}, acknowledged {value}/{status}"
        return None

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for problem in pool.map(read, reads):
            if problem:
                chk.fail(problem)

    def count(items, outcome):
        return sum(1 for r in items if r["outcome"] == outcome)

    total_received = sum(received.values())
    first = receiver.first_receipts()
    lags = sorted((first[e["id"]] - e["created_at"]) / 1000 for e in events if e["id"] in first)

    def pct(q):
        return round(lags[min(len(lags) - 1, int(q * len(lags)))], 2) if lags else None

    return {
        "violations": chk.violations,
        "ledger_verify": {"exit": verify_run.returncode, "report": ledger_report},
        "apiReads": len(reads),
        "writes": {
            "pixIn": {o: count(pix_ins, o) for o in ("acked", "unknown", "refused", "error", "not_sent")},
            "charge": {o: sum(1 for r in charges.values() if r["outcome"] == o)
                       for o in ("acked", "unknown", "refused", "error", "not_sent")},
            "pay": {o: count(pays, o) for o in ("acked", "unknown", "refused", "error")},
            "withdraw": {o: count(withdrawals, o)
                         for o in ("acked", "unknown", "refused", "error", "not_sent")},
        },
        "unacknowledgedResolved": dict(landed),
        "database": {
            "transactions": len(txns), "charges": len(db_charges), "events": len(events),
            "deliveries": dict(statuses),
        },
        "events": {
            "committed": len(events),
            "deliveredUnique": sum(1 for e in event_ids if received[e] > 0),
            "deliveredTotal": total_received,
            "duplicates": total_received - len(received),
            "refusedByReceiver": refused_by_receiver,
            "lagSeconds": {"p50": pct(0.5), "p99": pct(0.99), "max": pct(1.0)},
        },
    }


# --------------------------------------------------------------------------- setup


def cli(binary, env, workdir, *argv) -> dict:
    out = subprocess.run([binary, *argv], env=env, cwd=workdir, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"cofre {' '.join(argv)}: {out.stderr.strip()}")
    return json.loads(out.stdout) if "--json" in argv else {}


def setup(args, env, workdir, server, api, receiver_port) -> dict:
    company = cli(args.binary, env, workdir, "company", "create", "--name", "Crash Ltda",
                  "--tax-id", COMPANY_CNPJ, "--baas", "--admin-email", "crash@example.com",
                  "--admin-password", "crash-password-2026", "--json")
    master = cli(args.binary, env, workdir, "application", "create", "--company",
                 company["companyId"], "--name", "crash master", "--type", "MASTER", "--json")
    csv = os.path.join(workdir, "directory.csv")
    with open(csv, "w") as f:
        f.write("key,type,holderName,holderTaxID,ispb,branch,accountNumber,accountType\n")
        for i in range(args.accounts):
            f.write(f"tesouraria-{i}@crash.example,EMAIL,Crash Ltda,{COMPANY_CNPJ_DIGITS},"
                    "60701190,0001,1234567,CACC\n")
    cli(args.binary, env, workdir, "dict", "import", csv, "--json")
    server.start()
    m = master["appID"]
    accounts = []
    for i in range(args.accounts):
        acc = api.ok("POST", "/api/v1/account", m, {"correlationID": f"crash-account-{i}"})
        account_id = acc["account"]["accountId"]
        app = api.ok("POST", "/api/v1/application", m, {
            "accountId": account_id, "application": {"name": f"campanha {i}", "type": "API"}})
        app_id = app["application"]["appID"]
        key = f"campanha-{i}@crash.example"
        api.ok("POST", "/api/v1/pix-keys", app_id, {"type": "EMAIL", "pixKey": key})
        cli(args.binary, env, workdir, "account", "withdraw-key-api", "enable", "--account", account_id)
        api.ok("POST", "/api/v1/pix-keys/withdraw", app_id, {"pixKey": f"tesouraria-{i}@crash.example"})
        accounts.append({"id": account_id, "appId": app_id, "key": key})
    for event in EVENTS:
        api.ok("POST", "/api/v1/webhook", m, {"webhook": {
            "name": f"crash {event}", "event": event, "isActive": True,
            "url": f"http://127.0.0.1:{receiver_port}/hook?event={urllib.parse.quote(event)}"}})
    # Money to withdraw from the first second on; a Pix in like any other.
    for a in accounts:
        api.ok("POST", "/api/v1/sandbox/pix", a["appId"],
               {"pixKey": a["key"], "value": SEED_VALUE, "payer": {"name": "crash seed"}})
    return {"companyId": company["companyId"], "master": m, "accounts": accounts}


def wait_for_drain(db, receiver, company, timeout) -> float:
    began = time.monotonic()
    last = None
    while True:
        pending = db.rows(
            "SELECT COUNT(*) AS n FROM deliveries "
            f"WHERE company_id = '{company}' AND status = 'PENDING'"
        )[0]["n"]
        ids = {r["id"] for r in db.rows(f"SELECT id FROM events WHERE company_id = '{company}'")}
        received, _, _ = receiver.snapshot()
        missing = sum(1 for i in ids if received[i] == 0)
        waited = time.monotonic() - began
        if pending == 0 and missing == 0:
            return waited
        if waited > timeout:
            log(f"gave up waiting after {waited:.0f} s: {pending} pending, {missing} undelivered")
            return waited
        if (pending, missing) != last:
            log(f"draining: {pending} deliveries pending, {missing} events not received yet")
            last = (pending, missing)
        time.sleep(1)


# ---------------------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("backend", choices=["sqlite", "postgres"])
    p.add_argument("--binary", required=True)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--accounts", type=int, default=8)
    p.add_argument("--kills", type=int, default=12)
    p.add_argument("--up", type=float, nargs=2, default=(2.0, 8.0),
                   help="seconds the server runs between kills (uniform min max)")
    p.add_argument("--down", type=float, nargs=2, default=(0.1, 1.5),
                   help="seconds the server stays dead (uniform min max)")
    p.add_argument("--startup-kill-rate", type=float, default=0.25,
                   help="after this fraction of kills, also kill the next start before it answers")
    p.add_argument("--tail", type=float, default=3.0, help="seconds of load after the last kill")
    p.add_argument("--drain-timeout", type=float, default=300.0)
    p.add_argument("--receiver-fail-rate", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--postgres-admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--keep", action="store_true", help="keep the database and work folder")
    p.add_argument("--sabotage", choices=["phantom-ack", "lost-delivery", "balance", "balance-off", "half-movement",
                            "postings"],
                   help="self-test: break one expectation on purpose; the run must then fail")
    p.add_argument("--summary", help="write the JSON summary to this file too")
    args = p.parse_args()

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix=f"cofre-crash-{args.backend}-")
    # A private copy: others may rebuild target/debug/cofre while this runs.
    binary = os.path.join(workdir, "cofre")
    shutil.copy2(args.binary, binary)
    args.binary = binary
    log(f"{args.backend}: seed {seed}, work folder {workdir}")

    pg_name = None
    if args.backend == "sqlite":
        sqlite_path = os.path.join(workdir, "cofre.db")
        url = f"sqlite://{sqlite_path}"
    else:
        sqlite_path = None
        pg_name = f"cofre_crash_{int(time.time())}_{os.getpid()}"
        subprocess.run(["psql", "-X", "-q", args.postgres_admin_url, "-c", f"CREATE DATABASE {pg_name}"],
                       check=True)
        parsed = urllib.parse.urlparse(args.postgres_admin_url)
        url = urllib.parse.urlunparse(parsed._replace(path=f"/{pg_name}"))
    db = Database(args.backend, url, sqlite_path)

    port = free_port()
    env = dict(os.environ)
    env.update({
        "DATABASE_URL": url,
        "COFRE__SANDBOX__ENABLED": "true",
        "COFRE__WEBHOOKS__ALLOW_PRIVATE_NETWORKS": "true",
        "COFRE__RATE_LIMIT__PER_SECOND": "1000000",
        "COFRE__RATE_LIMIT__BURST": "1000000",
        "COFRE__FILES__LOCAL_DIR": os.path.join(workdir, "files"),
        "COFRE__LOG__LEVEL": "info",
        "COFRE__LOG__FORMAT": "json",
    })
    env.pop("RUST_LOG", None)
    if os.environ.get("CRASH_SERVER_LOG"):
        # e.g. info,sqlx::query=debug to see every statement of a failing run
        env["RUST_LOG"] = os.environ["CRASH_SERVER_LOG"]
    receiver = Receiver(args.receiver_fail_rate, random.Random(rng.random()))
    receiver.start()
    server = Server(binary, env, port, workdir)
    api = Api(port)
    failed = True
    started_at = time.monotonic()
    try:
        cli(binary, env, workdir, "migrate", "--json")
        ctx = setup(args, env, workdir, server, api, receiver.port)
        log(f"company {ctx['companyId']}, {len(ctx['accounts'])} accounts, "
            f"{args.clients} clients, {args.kills} kills, receiver on :{receiver.port}")

        stop_clients = threading.Event()
        stop_killer = threading.Event()
        stats = Stats()
        values = itertools.count(1)
        in_flight: dict[int, bool] = {}
        clients = [
            Client(i, ctx["accounts"][i % len(ctx["accounts"])], api, stop_clients, stats,
                   values, random.Random(rng.random()), in_flight)
            for i in range(args.clients)
        ]
        errors: list[str] = []
        killer = Killer(server, args.kills, tuple(args.up), tuple(args.down),
                        random.Random(rng.random()), in_flight, stop_killer, errors,
                        args.startup_kill_rate)
        load_began = time.monotonic()
        for c in clients:
            c.start()
        killer.start()
        while not killer.finished.wait(5):
            s = stats.c
            log(f"{s['sent']} sent, {s['acknowledged']} acknowledged, "
                f"{s['unacknowledged']} unacknowledged, {killer.done} kills")
        time.sleep(args.tail)
        stop_clients.set()
        for c in clients:
            c.join(timeout=60)
        load_seconds = time.monotonic() - load_began
        log(f"load stopped after {load_seconds:.0f} s; waiting for webhook deliveries")
        with open(os.path.join(workdir, "records.jsonl"), "w") as f:
            for c in clients:
                for kind, items in (("pixIn", c.pix_ins), ("charge", list(c.charges.values())),
                                    ("pay", c.pays), ("withdraw", list(c.withdrawals.values()))):
                    for r in items:
                        f.write(json.dumps({"client": c.cid, "kind": kind, **r}) + "\n")
        drain_seconds = wait_for_drain(db, receiver, ctx["companyId"], args.drain_timeout)
        result = verify(ctx, clients, receiver, db, api, server, args, args.sabotage)
        result["violations"][:0] = errors
        panics = 0
        with open(server.log_path, "rb") as f:
            for line in f:
                if b"panicked" in line:
                    panics += 1
        if panics:
            result["violations"].append(f"{panics} panics in {server.log_path}")
        if stats.c["server_errors"]:
            result["violations"].append(
                f"{stats.c['server_errors']} answers were 5xx (see {server.log_path})")
        summary = {
            "backend": args.backend,
            "seed": seed,
            "clients": args.clients,
            "accounts": args.accounts,
            "loadSeconds": round(load_seconds, 1),
            "drainSeconds": round(drain_seconds, 1),
            "totalSeconds": round(time.monotonic() - started_at, 1),
            "requests": {
                "sent": stats.c["sent"],
                "acknowledged": stats.c["acknowledged"],
                "unacknowledged": stats.c["unacknowledged"],
                "refused4xx": stats.c["refused"],
                "serverErrors5xx": stats.c["server_errors"],
                "connectionRefused": stats.c["not_sent"],
                "chargeRetriedAfterNoAnswer": {
                    "foundExisting": stats.c["charge_retry_found"],
                    "createdNow": stats.c["charge_retry_created"],
                },
                "withdrawalRetriedAfterNoAnswerAcked": stats.c["withdraw_retry_acked"],
                "longestSecondsWithoutAnAnswer": round(stats.max_ack_gap, 2),
                "unacknowledgedBecause": {k.split(":", 1)[1]: v for k, v in stats.c.items()
                                          if k.startswith("no_answer:")},
            },
            "kills": {
                "survived": killer.done,
                "duringStartup": killer.startup_kills,
                "requestsInFlightAtKill": killer.in_flight_at_kill,
                "restartSecondsMax": round(max(server.startup_seconds or [0]), 2),
                "downtimeSecondsMean": round(sum(killer.downtime) / max(len(killer.downtime), 1), 2),
            },
            **{k: v for k, v in result.items() if k != "violations"},
            "violations": len(result["violations"]),
        }
        print(json.dumps(summary, indent=2))
        if result["violations"]:
            log(f"{len(result['violations'])} VIOLATIONS:")
            for v in result["violations"][:50]:
                print(f"  - {v}")
            with open(os.path.join(workdir, "violations.txt"), "w") as f:
                f.write("\n".join(result["violations"]) + "\n")
        else:
            log(f"{args.backend}: no violation; {killer.done} kills survived")
        if args.summary:
            with open(args.summary, "w") as f:
                json.dump({**summary, "violationList": result["violations"][:200]}, f, indent=2)
        failed = bool(result["violations"]) or killer.done < args.kills
        if killer.done < args.kills:
            log(f"only {killer.done} of {args.kills} kills happened")
        return 1 if failed else 0
    finally:
        server.stop()
        receiver.stop()
        if failed or args.keep:
            log(f"kept {workdir}" + (f" and database {pg_name}" if pg_name else ""))
        else:
            shutil.rmtree(workdir, ignore_errors=True)
            if pg_name:
                subprocess.run(["psql", "-X", "-q", args.postgres_admin_url, "-c",
                                f"DROP DATABASE IF EXISTS {pg_name} WITH (FORCE)"], check=False)


if __name__ == "__main__":
    sys.exit(main())
