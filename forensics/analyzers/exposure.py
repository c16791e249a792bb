"""The secret exposure ledger (docs/secrets.md#the-exposure-ledger-which-secret-where-seen-by-whom): per distinct secret, built from ``secrets_found`` alone (the warehouse
never had a value): its kind and fingerprint, every copy with its conversation (a sub-agent's transcript named
as such), its position and how it arrived (the tool that read or printed it, the arguments the model wrote, the
person, a file name, a title), the models and providers each carrying conversation sent it to afterwards, first
and last seen, and what to rotate, grouped by the provider that issued the secret.

The report has it as a section of its own when anything was found; `forensics secrets` prints it and lists it in
``--format json``; the explorer reads it through the declared view ``secret_ledger``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from typing import Any

import duckdb
import polars as pl

from forensics.analyzers.base import Context, Section, Table
from forensics.analyzers.declare import Analyzer
from forensics.kernel.selection import SELECTED

NAME = "exposure"
TITLE = "Secret exposure ledger"

# kind -> (who issued it, what to do there); a kind not here: "the service that issued it"
ISSUERS: dict[str, tuple[str, str]] = {
    "openai-key": ("OpenAI", "platform.openai.com → API keys: revoke the key, create a new one"),
    "openai-token": ("OpenAI", "platform.openai.com → API keys: revoke the key, create a new one"),
    "anthropic-key": ("Anthropic", "console.anthropic.com → API keys: disable and delete the key, create a new one"),
    "aws-access-key": (
        "AWS",
        "IAM → the user's security credentials: deactivate and delete the access key, "
        "create a new pair; review CloudTrail for its use",
    ),
    "aws-secret-key": (
        "AWS",
        "IAM → the user's security credentials: deactivate and delete the access key, "
        "create a new pair; review CloudTrail for its use",
    ),
    "github-token": ("GitHub", "github.com → Settings → Developer settings: revoke the token; review the audit log"),
    "gitlab-token": ("GitLab", "GitLab → Access tokens: revoke the token"),
    "slack-token": ("Slack", "api.slack.com/apps → the app: regenerate the token (or revoke the webhook)"),
    "slack-webhook": ("Slack", "api.slack.com/apps → Incoming Webhooks: remove the webhook, add a new one"),
    "stripe-access-key": ("Stripe", "dashboard.stripe.com → Developers → API keys: roll the key"),
    "google-api-key": ("Google Cloud", "console.cloud.google.com → Credentials: regenerate or delete the key"),
    "gcp-service-account": ("Google Cloud", "IAM → Service accounts → Keys: delete the key, create a new one"),
    "hugging-face-token": ("Hugging Face", "huggingface.co → Settings → Access Tokens: invalidate and refresh"),
    "sendgrid-api-key": ("SendGrid", "app.sendgrid.com → Settings → API Keys: delete the key"),
    "twilio-api-key": ("Twilio", "console.twilio.com → API keys: delete the key"),
    "npm-tokens": ("npm", "npmjs.com → Access Tokens: delete the token"),
    "pypi-token": ("PyPI", "pypi.org → Account settings → API tokens: remove the token"),
    "discord-bot-token": ("Discord", "discord.com/developers → the application → Bot: reset the token"),
    "telegram-bot-token": ("Telegram", "@BotFather: /revoke for the bot"),
    "mailchimp-access-key": ("Mailchimp", "Account → Extras → API keys: disable the key"),
    "square-oauth-secret": ("Square", "developer.squareup.com → the application: replace the secret"),
    "azure-storage-account-access-key": ("Azure", "the storage account → Access keys: rotate the key"),
    "artifactory-credentials": ("JFrog Artifactory", "the user profile: revoke the API key or token"),
    "ibm-cloud-iam-key": ("IBM Cloud", "IAM → API keys: delete the key"),
    "ibm-cos-hmac-credentials": ("IBM Cloud", "the service credentials: delete and re-create them"),
    "cloudant-credentials": ("IBM Cloud", "the Cloudant service credentials: delete and re-create them"),
    "softlayer-credentials": ("IBM Cloud", "the classic infrastructure API key: regenerate it"),
    "groq-key": ("Groq", "console.groq.com → API Keys: delete the key"),
    "replicate-token": ("Replicate", "replicate.com → Account → API tokens: delete the token"),
    "perplexity-key": ("Perplexity", "perplexity.ai → Settings → API: revoke the key"),
    "xai-key": ("xAI", "console.x.ai → API keys: delete the key"),
    "google-oauth-secret": ("Google Cloud", "Credentials → the OAuth client: reset the secret"),
    "alibaba-access-key": ("Alibaba Cloud", "RAM → the user's AccessKey: disable and delete it, create a new one"),
    "digitalocean-token": ("DigitalOcean", "cloud.digitalocean.com → API → Tokens: delete the token"),
    "databricks-token": ("Databricks", "User Settings → Access tokens: revoke the token"),
    "vault-token": ("HashiCorp Vault", "vault token revoke (and its children)"),
    "terraform-token": ("HashiCorp Terraform Cloud", "User settings → Tokens: delete the token"),
    "pulumi-token": ("Pulumi", "app.pulumi.com → Access tokens: delete the token"),
    "doppler-token": ("Doppler", "the project → Access: revoke the token"),
    "flyio-token": ("Fly.io", "fly tokens revoke (or the dashboard's Tokens page)"),
    "atlassian-token": ("Atlassian", "id.atlassian.com → Security → API tokens: revoke the token"),
    "postman-key": ("Postman", "Postman → Settings → API keys: revoke the key"),
    "mailgun-key": ("Mailgun", "app.mailgun.com → API Security: delete the key, create a new one"),
    "notion-token": ("Notion", "notion.so/my-integrations → the integration: refresh the secret"),
    "age-secret-key": ("the key's owner", "make a new age identity and re-encrypt what the old one opens"),
    "linear-key": ("Linear", "Settings → API: revoke the key"),
    "sentry-token": ("Sentry", "User settings → Auth Tokens: revoke the token"),
    "shopify-token": ("Shopify", "the app's API credentials: rotate the token"),
    "private-key": (
        "the key's owner",
        "replace the key pair wherever its public half is trusted "
        "(servers' authorized_keys, TLS certificates, signing)",
    ),
    "json-web-token": ("the token's issuer", "revoke the session or rotate the signing key if it is long-lived"),
    "bearer-token": ("the API the request went to", "revoke the token"),
    "basic-auth-credentials": ("the host in the URL", "change the password of that account"),
    "password": ("the system it opens", "change the password"),
    "secret-keyword": ("the service the assignment names", "rotate the credential the assignment holds"),
}
UNKNOWN_ISSUER = ("the service that issued it", "rotate the credential")
# a model name -> the provider that serves it, when the log does not say (conversations.provider)
MODEL_PROVIDERS = [
    (re.compile(p, re.I), name)
    for p, name in (
        (r"claude|anthropic|sonnet|opus|haiku", "anthropic"),
        (r"gpt|^o\d|codex|chatgpt|openai|davinci", "openai"),
        (r"gemini|gemma|palm|bison", "google"),
        (r"deepseek", "deepseek"),
        (r"qwen|qwq", "alibaba"),
        (r"kimi|moonshot", "moonshot"),
        (r"glm|zhipu", "zhipu"),
        (r"grok", "xai"),
        (r"mistral|codestral|devstral", "mistral"),
        (r"llama", "meta"),
        (r"mimo", "xiaomi"),
        (r"command-r|cohere", "cohere"),
    )
]
HOW = {
    "sources.path": "file_name",
    "conversations.title": "title",
    "conversations.model": "model_name",
    "quarantine.raw": "quarantine",
    "quarantine.location": "quarantine",
    "import_runs.path": "file_name",
}

COPIES = """
SELECT f.kind, f.fingerprint, f.field, f.source_id, f.conversation_id, f.seq, f.position, f.call_index, f.location,
       c.title, c.parent_conversation_id AS parent, c.provider, c.model AS conv_model, m.role, m.origin,
       coalesce(m.created_at, c.created_at, c.updated_at) AS "at",
       CASE WHEN f.field LIKE 'tool_calls.%' THEN (
                SELECT string_agg(DISTINCT t.name, ', ' ORDER BY t.name) FROM tool_calls t
                WHERE t.conversation_id = f.conversation_id AND t.seq = f.seq
                  AND (f.call_index IS NULL OR t.call_index = f.call_index))
            WHEN f.field LIKE 'messages.%' THEN (
                SELECT string_agg(DISTINCT t.name, ', ' ORDER BY t.name) FROM tool_calls t
                WHERE t.conversation_id = f.conversation_id
                  AND (t.result_seq = f.seq OR (m.tool_call_id IS NOT NULL AND t.call_id = m.tool_call_id)))
       END AS tool,
       (SELECT list(DISTINCT u.model ORDER BY u.model) FROM message_usage u
         WHERE u.conversation_id = f.conversation_id AND u.model IS NOT NULL
           AND (f.seq IS NULL OR u.seq >= f.seq)) AS later_models
FROM secrets_found f
LEFT JOIN conversations c USING (conversation_id)
LEFT JOIN messages m ON m.conversation_id = f.conversation_id AND m.seq = f.seq
{where}
ORDER BY f.fingerprint, "at" NULLS LAST, f.conversation_id, f.seq NULLS FIRST
"""


def provider_of(model: str | None, logged: str | None = None) -> str:
    """The provider a request went to: as logged, else read from the model's name; '?' when neither says."""
    if logged:
        return logged.lower()
    for rx, name in MODEL_PROVIDERS:
        if model and rx.search(model):
            return name
    return "?"


def _how(field: str, role: str | None, origin: str | None) -> str:
    if field in HOW:
        return HOW[field]
    if field.startswith("tool_calls."):
        return "tool_arguments"
    if field.startswith("messages."):
        if origin == "tool_result" or role == "tool":
            return "tool_result"
        if origin == "person":
            return "person"
        if role == "assistant" or origin == "assistant":
            return "assistant"
        return origin or role or "message"
    return field.split(".")[0]


def _iso(v: Any) -> str | None:
    return v.isoformat(sep=" ", timespec="seconds") if isinstance(v, datetime) else None


def ledger(con: duckdb.DuckDBPyConnection, selected: str | None = None) -> dict[str, Any]:
    """``{"secrets": [...], "rotation": [...]}``, one row per distinct secret (rule and fingerprint), most copies
    first; empty lists when nothing was found, or when the warehouse predates masking at ingest."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'secrets_found'").fetchall()[0][0]:
        return {"secrets": [], "rotation": []}
    where = (
        f"WHERE f.conversation_id IS NULL OR f.conversation_id IN (SELECT conversation_id FROM {selected})"
        if selected
        else ""
    )
    has_call = con.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'secrets_found' AND column_name = 'call_index'"
    ).fetchall()[0][0]
    sql = (
        COPIES.format(where=where) if has_call else COPIES.format(where=where).replace("f.call_index", "NULL::INTEGER")
    )
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in (dict(zip(cols, x)) for x in cur.fetchall()):
        key = (r["kind"], r["fingerprint"])
        issuer, action = ISSUERS.get(r["kind"], UNKNOWN_ISSUER)
        row = rows.setdefault(
            key,
            {
                "kind": r["kind"],
                "fingerprint": r["fingerprint"],
                "issuer": issuer,
                "rotate": action,
                "copies": 0,
                "conversations": [],
                "subagents": [],
                "arrivals": [],
                "models": [],
                "first_seen": None,
                "last_seen": None,
            },
        )
        row["copies"] += 1
        cid = r["conversation_id"]
        if cid and cid not in row["conversations"]:
            row["conversations"].append(cid)
            if r["parent"]:
                row["subagents"].append(cid)
        sent = [
            (m, provider_of(m, r["provider"]))
            for m in (r["later_models"] or ([r["conv_model"]] if r["conv_model"] else []))
        ]
        row["arrivals"].append(
            {
                "conversation": cid,
                "subagent_of": r["parent"],
                "title": r["title"],
                "position": r["position"],
                "seq": r["seq"],
                "field": r["field"],
                "how": _how(r["field"], r["role"], r["origin"]),
                "tool": r["tool"],
                "location": r["location"],
                "source": r["source_id"],
                "at": _iso(r["at"]),
                "sent_to": [{"model": m, "provider": p} for m, p in sent],
            }
        )
        for m, p in sent:
            if {"model": m, "provider": p} not in row["models"]:
                row["models"].append({"model": m, "provider": p})
        at = _iso(r["at"])
        if at:
            row["first_seen"] = min(filter(None, (row["first_seen"], at)))
            row["last_seen"] = max(filter(None, (row["last_seen"], at)))
    found = sorted(rows.values(), key=lambda x: (-x["copies"], x["kind"], x["fingerprint"]))
    return {"secrets": found, "rotation": rotation(found)}


def rotation(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rotation checklist: per issuing provider, what to do and which secrets (kind, fingerprint, copies)."""
    by: dict[str, dict[str, Any]] = defaultdict(lambda: {"secrets": []})
    for s in found:
        group = by[s["issuer"]]
        group["provider"], group["action"] = s["issuer"], s["rotate"]
        group["secrets"].append(
            {"kind": s["kind"], "fingerprint": s["fingerprint"], "copies": s["copies"], "last_seen": s["last_seen"]}
        )
    return sorted(by.values(), key=lambda g: (-sum(x["copies"] for x in g["secrets"]), g["provider"]))


def arrival_text(a: dict[str, Any]) -> str:
    """How one copy arrived, in words: "tool_result of Read", "tool_arguments of Bash", "person", ..."""
    return f"{a['how']} of {a['tool']}" if a["tool"] and a["how"] in ("tool_result", "tool_arguments") else a["how"]


def where_text(a: dict[str, Any]) -> str:
    """Where one copy is: its conversation (a sub-agent's transcript named as such) and position."""
    if not a["conversation"]:
        return f"source {a['source']}" + (f" {a['location']}" if a["location"] else "")
    conv = (
        f"sub-agent transcript {a['conversation']} (of {a['subagent_of']})"
        if a["subagent_of"]
        else f"conversation {a['conversation']}"
    )
    at = (
        f" at position {a['position']}"
        if a["position"] is not None
        else f" at seq {a['seq']} (off the main path)"
        if a["seq"] is not None
        else f" ({a['field']})"
    )
    return conv + at


def models_text(models: list[dict[str, Any]]) -> str:
    return ", ".join(f"{m['provider']} {m['model']}" for m in models) or "no model recorded"


def render(found: dict[str, Any]) -> str:
    """The ledger as `forensics secrets` prints it under its totals (the caller masks the whole text again)."""
    out: list[str] = []
    for i, s in enumerate(found["secrets"], 1):
        subs = f", {len(s['subagents'])} of them sub-agent transcripts" if s["subagents"] else ""
        out.append(
            f"\nsecret {i}: {s['kind']}  fingerprint {s['fingerprint']}  {s['copies']} copies in "
            f"{len(s['conversations'])} conversations{subs}"
        )
        out.append(f"  first seen {s['first_seen'] or '?'}  last seen {s['last_seen'] or '?'}")
        out.append(f"  sent to: {models_text(s['models'])}")
        for a in s["arrivals"]:
            out.append(f"  - {where_text(a)}: {arrival_text(a)}" + (f" ({a['at']})" if a["at"] else ""))
    if found["rotation"]:
        out.append("\nrotate, by provider:")
        for g in found["rotation"]:
            out.append(f"  [ ] {g['provider']}: {g['action']}")
            for x in g["secrets"]:
                out.append(
                    f"        {x['kind']} {x['fingerprint']} ({x['copies']} copies, last seen {x['last_seen'] or '?'})"
                )
    return "\n".join(out)


def tables(found: dict[str, Any]) -> list[Table]:
    """The report's three tables: the secrets, every copy, the rotation checklist."""
    secrets = pl.DataFrame(
        [
            {
                "kind": s["kind"],
                "fingerprint": s["fingerprint"],
                "copies": s["copies"],
                "conversations": len(s["conversations"]),
                "sub-agent transcripts": len(s["subagents"]),
                "arrived as": ", ".join(dict.fromkeys(arrival_text(a) for a in s["arrivals"])),
                "sent to": models_text(s["models"]),
                "first seen": s["first_seen"] or "",
                "last seen": s["last_seen"] or "",
            }
            for s in found["secrets"]
        ],
        infer_schema_length=None,
    )
    copies = pl.DataFrame(
        [
            {"fingerprint": s["fingerprint"], "where": where_text(a), "how": arrival_text(a), "at": a["at"] or ""}
            for s in found["secrets"]
            for a in s["arrivals"]
        ],
        infer_schema_length=None,
    )
    rotate = pl.DataFrame(
        [
            {
                "provider": g["provider"],
                "what to do": g["action"],
                "secrets": ", ".join(f"{x['kind']} {x['fingerprint']} ×{x['copies']}" for x in g["secrets"]),
            }
            for g in found["rotation"]
        ],
        infer_schema_length=None,
    )
    return [
        Table("secret_ledger", "Each distinct secret (never its value)", secrets),
        Table("secret_copies", "Every copy: where it is and how it arrived", copies),
        Table("secret_rotation", "Rotate, by provider", rotate),
    ]


def run(ctx: Context) -> Section:
    found = ledger(ctx.con, SELECTED)
    if not found["secrets"]:
        return Section.idle(NAME, TITLE, "no secret was found at ingest in the selected conversations")
    n = len(found["secrets"])
    copies = sum(s["copies"] for s in found["secrets"])
    top = found["secrets"][0]
    subs = sum(len(s["subagents"]) for s in found["secrets"])
    text = (
        f"{n} distinct secrets, {copies} copies. The most copied, a {top['kind']} "
        f"(fingerprint {top['fingerprint']}), has {top['copies']} copies in {len(top['conversations'])} "
        f"conversations and was sent to {models_text(top['models'])}."
        + (f" {subs} of the conversations are sub-agent transcripts." if subs else "")
        + f" Rotate first: {', '.join(g['provider'] for g in found['rotation'][:4])}. A fingerprint is a slow "
        "salted hash: it tells copies of one secret apart from another, never the value."
    )
    return Section(NAME, TITLE, text, {}, tables(found))


ANALYZER = Analyzer(NAME, TITLE, run, views={"secret_ledger": ledger})
