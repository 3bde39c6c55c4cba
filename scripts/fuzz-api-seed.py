"""Seeds the demo company for `scripts/fuzz api` and prints schemathesis dictionaries.

Usage: fuzz-api-seed.py BASE_URL MASTER_APP_ID CAMPAIGN_APP_ID_FILE

Creates through the API one of each resource a path parameter can name (a campaign
account with its own AppID and Pix key, a webhook and its deliveries, a customer,
charges unpaid, paid and disputed, a refund, a static QR code, a subscription, a file),
then prints TOML `[dictionaries.*]`
tables with every id the answers carried. schemathesis draws path parameters from them
half of the time, so operations on one resource reach their logic instead of 404.
The campaign's AppID (an API application) goes to CAMPAIGN_APP_ID_FILE, for a second
pass as a non-MASTER caller.
A step that fails is reported and skipped: the run goes on with fewer ids.
"""

import json
import sys
import urllib.error
import urllib.request

base, master = sys.argv[1].rstrip("/"), sys.argv[2]
ids, accounts, keys = set(), set(), set()


def call(method, path, body=None, app_id=master, raw=None, content_type=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", app_id)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req) as res:
            answer = json.loads(res.read() or b"null")
    except urllib.error.HTTPError as err:
        print(f"seed: {method} {path}: {err.code} {err.read()[:200]!r}", file=sys.stderr)
        return None
    collect(answer)
    return answer


def collect(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items():
            collect(v, k)
    elif isinstance(value, list):
        for v in value:
            collect(v, key)
    elif isinstance(value, str) and value and (key == "id" or key.endswith(("Id", "ID"))):
        if key == "accountId":
            accounts.add(value)
        elif key not in ("appID", "clientId", "taxID"):
            ids.add(value)


def multipart(fields, file_bytes, file_name):
    boundary = "cofre-fuzz-seed"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
        "Content-Type: application/pdf\r\n\r\n".encode() + file_bytes + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


keys.add("cobranca@demo.cofre.dev")
account = call("POST", "/api/v1/account", {"correlationID": "fuzz-account"})
campaign = None
if account:
    account_id = account["account"]["accountId"]
    app = call(
        "POST",
        "/api/v1/application",
        {"accountId": account_id, "application": {"name": "Fuzz", "type": "API"}},
    )
    if app:
        campaign = app["application"]["appID"]
        with open(sys.argv[3], "w") as out:
            out.write(campaign)
        if call("POST", "/api/v1/pix-keys", {"type": "EMAIL", "pixKey": "fuzz@demo.cofre.dev"}, app_id=campaign):
            keys.add("fuzz@demo.cofre.dev")
call("GET", "/api/v1/account")
# First, so that the payments below leave deliveries behind.
webhook = call(
    "POST",
    "/api/v1/webhook",
    {"webhook": {"name": "fuzz", "event": "OPENPIX:CHARGE_COMPLETED", "url": "https://example.com/hook"}},
)
call("POST", "/api/v1/customer", {"name": "Fuzz", "email": "fuzz@example.com", "correlationID": "fuzz-customer"})
call("POST", "/api/v1/charge", {"correlationID": "fuzz-charge", "value": 1000})
call("POST", "/api/v1/charge", {"correlationID": "fuzz-disputed", "value": 3000})
call("POST", "/api/v1/sandbox/charge/fuzz-disputed/pay")
received = call("GET", "/api/v1/transaction") or {}
for movement in received.get("transactions", []):
    # The newest movement is the Pix the sandbox payer just sent: dispute it.
    if call("POST", "/api/v1/sandbox/dispute", {"transactionID": movement.get("transactionID")}):
        break
call("POST", "/api/v1/charge", {"correlationID": "fuzz-paid", "value": 5000})
call("POST", "/api/v1/sandbox/charge/fuzz-paid/pay")
call("POST", "/api/v1/charge/fuzz-paid/refund", {"correlationID": "fuzz-refund", "value": 100})
call("POST", "/api/v1/qrcode-static", {"name": "Fuzz", "correlationID": "fuzz-qr", "value": 100})
call(
    "POST",
    "/api/v1/subscriptions",
    {
        "correlationID": "fuzz-subscription",
        "value": 1000,
        "customer": {"name": "Fuzz", "taxID": "111.444.777-35"},
        "frequency": "MONTHLY",
        "dayGenerateCharge": 5,
        "dayDue": 10,
        "type": "RECURRENT",
    },
)
if webhook:
    call("GET", f"/api/v1/webhook/{webhook['webhook']['id']}/deliveries")
pdf = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
body, content_type = multipart({"purpose": "DISPUTE_EVIDENCE", "correlationID": "fuzz-file"}, pdf, "a.pdf")
call("POST", "/api/v1/files", raw=body, content_type=content_type)
call("GET", "/api/v1/dispute")


def dictionary(name, values):
    listed = ", ".join(json.dumps(v) for v in sorted(values))
    print(f"[dictionaries.{name}]\nvalues = [{listed}]\n")


dictionary("ids", ids or {"none"})
dictionary("accounts", accounts or {"none"})
dictionary("keys", keys)
print(f"seed: {len(ids)} ids, {len(accounts)} accounts, {len(keys)} keys", file=sys.stderr)
