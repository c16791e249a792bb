"""The planted corpus of bench/secret_recall.py: real secret shapes, in the places an agent log holds them, and
near-misses that are not secrets.

Shapes follow the providers' documented formats (and the shapes gitleaks' and detect-secrets' rules describe):
the prefix, the alphabet and the length of each; the random part is drawn from a seeded generator, so no value
is real. Each shape is planted in eight contexts: a person's prompt, a ``.env`` a tool printed, a JSON string with
escapes (tool arguments), a line wrapped by a terminal across two lines, a URL-encoded redirect, base64 in a
data URL, a file name, and a header in tool arguments. A sample says where the secret stands in its text (its
encoded form where the context encodes it). Near-misses: hashes, ids, example keys from the providers' own docs,
placeholders and test fixtures' values, encoded blobs, counts named like credentials.

Split: a sample is held out by a stable hash of its shape (``held_out``), so a shape tuned on the dev half has
its own values and contexts never seen on the held-out half.
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote

AL = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits
LO = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = AL + "+/"
URLSAFE = AL + "-_"


@dataclass
class Sample:
    id: str
    family: str  # a rule family (ai, cloud, vcs, ...) or "near-miss:<what>"
    shape: str
    context: str
    text: str
    secrets: list[str] = field(default_factory=list)  # as they stand in the text; empty for a near-miss

    @property
    def positive(self) -> bool:
        return bool(self.secrets)


def held_out(s: Sample) -> bool:
    """A planted shape is held out whole (its values and contexts); a near-miss by its own id."""
    return zlib.crc32((s.shape if s.positive else s.id).encode()) % 2 == 1


def _r(rng: random.Random, n: int, alphabet: str = AL) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


# shape -> (family, variable name it is usually kept under, generator)
Gen = Callable[[random.Random], str]
SHAPES: dict[str, tuple[str, str, Gen]] = {
    # AI providers
    "openai-project": ("ai", "OPENAI_API_KEY", lambda r: f"sk-proj-{_r(r, 74, URLSAFE)}T3BlbkFJ{_r(r, 74, URLSAFE)}"),
    "openai-svcacct": (
        "ai",
        "OPENAI_API_KEY",
        lambda r: f"sk-svcacct-{_r(r, 58, URLSAFE)}T3BlbkFJ{_r(r, 58, URLSAFE)}",
    ),
    "openai-legacy": ("ai", "OPENAI_API_KEY", lambda r: f"sk-{_r(r, 20)}T3BlbkFJ{_r(r, 20)}"),
    "anthropic": ("ai", "ANTHROPIC_API_KEY", lambda r: f"sk-ant-api03-{_r(r, 93, URLSAFE)}AA"),
    "anthropic-admin": ("ai", "ANTHROPIC_ADMIN_KEY", lambda r: f"sk-ant-admin01-{_r(r, 93, URLSAFE)}AA"),
    "huggingface": ("ai", "HF_TOKEN", lambda r: f"hf_{_r(r, 34, string.ascii_letters)}"),
    "groq": ("ai", "GROQ_API_KEY", lambda r: f"gsk_{_r(r, 52)}"),
    "replicate": ("ai", "REPLICATE_API_TOKEN", lambda r: f"r8_{_r(r, 37)}"),
    "perplexity": ("ai", "PERPLEXITY_API_KEY", lambda r: f"pplx-{_r(r, 48)}"),
    "xai": ("ai", "XAI_API_KEY", lambda r: f"xai-{_r(r, 80)}"),
    "deepseek": ("ai", "DEEPSEEK_API_KEY", lambda r: f"sk-{_r(r, 32, HEX)}"),
    "openrouter": ("ai", "OPENROUTER_API_KEY", lambda r: f"sk-or-v1-{_r(r, 64, HEX)}"),
    # cloud
    "aws-access-key-id": ("cloud", "AWS_ACCESS_KEY_ID", lambda r: "AKIA" + _r(r, 16, UP.replace("0", ""))),
    "aws-secret": ("cloud", "AWS_SECRET_ACCESS_KEY", lambda r: _r(r, 40, B64)),
    "gcp-api-key": ("cloud", "GOOGLE_API_KEY", lambda r: f"AIza{_r(r, 35, URLSAFE)}"),
    "gcp-oauth-secret": ("cloud", "GOOGLE_CLIENT_SECRET", lambda r: f"GOCSPX-{_r(r, 28, URLSAFE)}"),
    "azure-storage": ("cloud", "AZURE_STORAGE_KEY", lambda r: _r(r, 86, B64) + "=="),
    "alibaba": ("cloud", "ALIBABA_CLOUD_ACCESS_KEY_ID", lambda r: f"LTAI{_r(r, 20)}"),
    "digitalocean": ("cloud", "DIGITALOCEAN_TOKEN", lambda r: f"dop_v1_{_r(r, 64, HEX)}"),
    "databricks": ("cloud", "DATABRICKS_TOKEN", lambda r: f"dapi{_r(r, 32, HEX)}"),
    "hashicorp-vault": ("cloud", "VAULT_TOKEN", lambda r: f"hvs.{_r(r, 90, URLSAFE)}"),
    "terraform-cloud": ("cloud", "TF_TOKEN", lambda r: f"{_r(r, 14, LO)}.atlasv1.{_r(r, 67, LO)}"),
    "pulumi": ("cloud", "PULUMI_ACCESS_TOKEN", lambda r: f"pul-{_r(r, 40, HEX)}"),
    "doppler": ("cloud", "DOPPLER_TOKEN", lambda r: f"dp.pt.{_r(r, 43)}"),
    "flyio": ("cloud", "FLY_API_TOKEN", lambda r: f"fo1_{_r(r, 43, URLSAFE)}"),
    # source control and packages
    "github-classic": ("vcs", "GITHUB_TOKEN", lambda r: f"ghp_{_r(r, 36)}"),
    "github-oauth": ("vcs", "GH_TOKEN", lambda r: f"gho_{_r(r, 36)}"),
    "github-app": ("vcs", "GITHUB_TOKEN", lambda r: f"ghs_{_r(r, 36)}"),
    "github-fine-grained": ("vcs", "GITHUB_PAT", lambda r: f"github_pat_{_r(r, 22)}_{_r(r, 59)}"),
    "gitlab-pat": ("vcs", "GITLAB_TOKEN", lambda r: f"glpat-{_r(r, 20, URLSAFE)}"),
    "gitlab-runner": ("vcs", "RUNNER_TOKEN", lambda r: f"glrt-{_r(r, 20, URLSAFE)}"),
    "atlassian": ("vcs", "JIRA_API_TOKEN", lambda r: f"ATATT3xFfGF0{_r(r, 171, URLSAFE)}={_r(r, 8, UP)}"),
    "npm": ("vcs", "NPM_TOKEN", lambda r: f"npm_{_r(r, 36)}"),
    "pypi": ("vcs", "PYPI_TOKEN", lambda r: f"pypi-AgEIcHlwaS5vcmc{_r(r, 70, URLSAFE)}"),
    "linear": ("vcs", "LINEAR_API_KEY", lambda r: f"lin_api_{_r(r, 40)}"),
    "postman": ("vcs", "POSTMAN_API_KEY", lambda r: f"PMAK-{_r(r, 24, HEX)}-{_r(r, 34, HEX)}"),
    "sentry": ("vcs", "SENTRY_AUTH_TOKEN", lambda r: f"sntryu_{_r(r, 64, HEX)}"),
    # payments and commerce
    "stripe-live": ("payments", "STRIPE_SECRET_KEY", lambda r: f"sk_live_{_r(r, 99)}"),
    "stripe-restricted": ("payments", "STRIPE_KEY", lambda r: f"rk_live_{_r(r, 99)}"),
    "stripe-webhook": ("payments", "STRIPE_WEBHOOK_SECRET", lambda r: f"whsec_{_r(r, 32)}"),
    "square": ("payments", "SQUARE_ACCESS_TOKEN", lambda r: f"EAAA{_r(r, 60, URLSAFE)}"),
    "shopify": ("payments", "SHOPIFY_ACCESS_TOKEN", lambda r: f"shpat_{_r(r, 32, HEX)}"),
    # messaging and mail
    "slack-bot": (
        "messaging",
        "SLACK_BOT_TOKEN",
        lambda r: f"xoxb-{_r(r, 12, string.digits)}-{_r(r, 13, string.digits)}-{_r(r, 24)}",
    ),
    "slack-user": (
        "messaging",
        "SLACK_TOKEN",
        lambda r: (
            f"xoxp-{_r(r, 12, string.digits)}-{_r(r, 12, string.digits)}-{_r(r, 13, string.digits)}-{_r(r, 32, HEX)}"
        ),
    ),
    "slack-webhook": (
        "messaging",
        "SLACK_WEBHOOK_URL",
        lambda r: f"https://hooks.slack.com/services/T{_r(r, 10, UP)}/B{_r(r, 10, UP)}/{_r(r, 24)}",
    ),
    "discord-bot": ("messaging", "DISCORD_TOKEN", lambda r: f"M{_r(r, 25)}.{_r(r, 6, URLSAFE)}.{_r(r, 38, URLSAFE)}"),
    "telegram-bot": ("messaging", "TELEGRAM_BOT_TOKEN", lambda r: f"{r.randint(10**8, 10**10)}:AA{_r(r, 33, URLSAFE)}"),
    "twilio": ("messaging", "TWILIO_API_KEY", lambda r: f"SK{_r(r, 32, HEX)}"),
    "sendgrid": ("messaging", "SENDGRID_API_KEY", lambda r: f"SG.{_r(r, 22, URLSAFE)}.{_r(r, 43, URLSAFE)}"),
    "mailgun": ("messaging", "MAILGUN_API_KEY", lambda r: f"key-{_r(r, 32, HEX)}"),
    "mailchimp": ("messaging", "MAILCHIMP_API_KEY", lambda r: f"{_r(r, 32, HEX)}-us{r.randint(10, 21)}"),
    "notion": ("messaging", "NOTION_TOKEN", lambda r: f"ntn_{_r(r, 11, string.digits)}{_r(r, 35)}"),
    # keys and tokens with no vendor prefix
    "jwt": (
        "crypto",
        "SESSION_TOKEN",
        lambda r: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOi" + _r(r, 40, URLSAFE) + "." + _r(r, 43, URLSAFE),
    ),
    "age": ("crypto", "SOPS_AGE_KEY", lambda r: "AGE-SECRET-KEY-1" + _r(r, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
    "password": ("generic", "DB_PASSWORD", lambda r: _r(r, 6, string.ascii_letters) + r.choice("!#%&*") + _r(r, 6)),
    "api-key-generic": ("generic", "API_KEY", lambda r: _r(r, 32)),
    "client-secret": ("generic", "CLIENT_SECRET", lambda r: _r(r, 40, URLSAFE)),
}
# shapes whose value is a multi-line block: planted whole in the contexts that keep lines
BLOCKS: dict[str, tuple[str, Gen]] = {
    "rsa-private-key": (
        "crypto",
        lambda r: (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA"
            + "\n".join(_r(r, 64, B64) for _ in range(6))
            + "\n-----END RSA PRIVATE KEY-----"
        ),
    ),
    "openssh-private-key": (
        "crypto",
        lambda r: (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
            + "\n".join(_r(r, 70, B64) for _ in range(5))
            + "\n-----END OPENSSH PRIVATE KEY-----"
        ),
    ),
    "ec-private-key": (
        "crypto",
        lambda r: (
            "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI"
            + "\n".join(_r(r, 64, B64) for _ in range(3))
            + "\n-----END EC PRIVATE KEY-----"
        ),
    ),
}
URLS: dict[str, tuple[str, Callable[[random.Random], tuple[str, str]]]] = {
    # (the URL, the password in it)
    "postgres-url": (
        "generic",
        lambda r: (lambda p: (f"postgresql://app:{p}@db.internal:5432/prod", p))(_r(r, 10) + "!" + _r(r, 5)),
    ),
    "mongodb-url": (
        "generic",
        lambda r: (lambda p: (f"mongodb+srv://admin:{p}@cluster0.ab1cd.mongodb.net/app", p))(_r(r, 16)),
    ),
    "redis-url": (
        "generic",
        lambda r: (lambda p: (f"redis://default:{p}@redis-12345.cloud.redislabs.com:6379", p))(_r(r, 24)),
    ),
}
WRAP = 80


def _contexts(var: str, s: str, r: random.Random) -> list[tuple[str, str, str]]:
    """(context, text, the secret as it stands in the text) for one value."""
    out = [
        ("prompt", f"here is the key, {s} — please add it to the deploy config", s),
        ("env", f"$ cat .env\nNODE_ENV=production\n{var}={s}\nPORT=3000\n", s),
        ("json-escaped", json.dumps({"command": f'export {var}="{s}" && ./deploy.sh\n', "timeout": 120}), s),
        ("file-name", json.dumps({"file_path": f"/home/dev/.config/app/backup-{s}.json"}), s),
        (
            "tool-args",
            json.dumps(
                {
                    "url": "https://api.example.com/v1/sync",
                    "method": "POST",
                    "headers": {"Content-Type": "application/json", "X-Api-Key": s},
                }
            ),
            s,
        ),
    ]
    # a terminal wraps a log line at 80 columns in the middle of the key
    fixed = f"{var}="
    cut = min(len(s) // 2, WRAP - len(fixed) - 12)
    if cut >= 8:
        filler = "[10:00:06] INFO settings loaded from the environment of the deploy job, among them "
        line = filler[: WRAP - cut - len(fixed) - 1] + " " + fixed + s
        rows = [line[i : i + WRAP] for i in range(0, len(line), WRAP)]  # every row at the terminal's width
        at = len(line) - len(s)
        out.append(("split", "$ tail -1 deploy.log\n" + "\n".join(rows) + "\n$ ", "\n".join(rows)[at + at // WRAP :]))
    # URL-encoded: a callback URL carried in another URL's query string
    inner = f"https://api.example.com/cb?api_key={s}&state=xyz"
    enc = quote(inner, safe="")
    out.append(("url-encoded", f"redirecting to https://login.example.com/authorize?next={enc}", quote(s, safe="")))
    # base64 in a data URL: a config file attached as a data URL
    plain = f"# app config\n{var}={s}\nDEBUG=false\n"
    payload = base64.b64encode(plain.encode()).decode()
    at = plain.index(s)  # the base64 characters that encode the secret: each 3 bytes are 4 characters
    out.append(
        (
            "data-url",
            f"![config](data:text/plain;base64,{payload})",
            payload[4 * (at // 3) : 4 * ((at + len(s) - 1) // 3 + 1)],
        )
    )
    return out


def positives(seed: int = 45) -> list[Sample]:
    r = random.Random(seed)
    out: list[Sample] = []
    for shape, (family, var, gen) in SHAPES.items():
        for k in range(len(_contexts(var, gen(r), r))):  # a value of its own in each context
            context, text, secret = _contexts(var, gen(r), r)[k]
            out.append(Sample(f"{shape}/{context}", family, shape, context, text, [secret]))
    for shape, (family, gen) in BLOCKS.items():
        for context in ("prompt", "env", "json-escaped"):
            key = gen(r)
            if context == "prompt":
                text, secret = f"use this deploy key:\n{key}\nthanks", key
            elif context == "env":
                text, secret = f"$ cat ~/.ssh/id_deploy\n{key}\n", key
            else:
                text = json.dumps({"content": key + "\n", "file_path": "/home/dev/.ssh/id_deploy"})
                secret = json.dumps(key)[1:-1]
            out.append(Sample(f"{shape}/{context}", family, shape, context, text, [secret]))
    for shape, (family, gen) in URLS.items():
        for context in ("prompt", "env", "json-escaped", "tool-args"):
            url, pw = gen(r)
            text = {
                "prompt": f"connect with {url} please",
                "env": f"$ cat .env\nDATABASE_URL={url}\n",
                "json-escaped": json.dumps({"command": f"psql \"{url}\" -c 'select 1'\n"}),
                "tool-args": json.dumps({"connection_string": url}),
            }[context]
            out.append(Sample(f"{shape}/{context}", family, shape, context, text, [pw]))
    return out


def _hexs(r: random.Random, n: int) -> str:
    return _r(r, n, HEX)


def near_misses(seed: int = 4545) -> list[Sample]:
    """Text that holds no secret, each shaped like one."""
    r = random.Random(seed)
    uuid = lambda: f"{_hexs(r, 8)}-{_hexs(r, 4)}-4{_hexs(r, 3)}-a{_hexs(r, 3)}-{_hexs(r, 12)}"  # noqa: E731
    items: list[tuple[str, str]] = []
    for _ in range(4):
        items += [
            ("hash", f"commit {_hexs(r, 40)}\nAuthor: Dev <dev@example.com>\n\n    fix the login redirect"),
            ("hash", f"sha256sum dist/app.tar.gz\n{_hexs(r, 64)}  dist/app.tar.gz"),
            ("hash", f"md5: {_hexs(r, 32)}"),
            ("hash", f"FROM python:3.12-slim@sha256:{_hexs(r, 64)}"),
            (
                "hash",
                json.dumps(
                    {
                        "integrity": "sha512-" + _r(r, 86, B64) + "==",
                        "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
                    }
                ),
            ),
            ("hash", f'etag: "{_hexs(r, 32)}"  x-request-id: {uuid()}'),
            ("id", f"session {uuid()} resumed; parent {uuid()}"),
            ("id", json.dumps({"id": "msg_01" + _r(r, 22), "type": "message", "request_id": "req_011C" + _r(r, 20)})),
            ("id", json.dumps({"tool_use_id": "toolu_01" + _r(r, 22), "content": "ok"})),
            ("id", f"Run ID: {_r(r, 26, UP)} (ULID) trace_id={_hexs(r, 32)} span_id={_hexs(r, 16)}"),
            ("id", f"chatcmpl-{_r(r, 29)} finished; call_{_r(r, 24)} returned"),
            ("id", f"https://github.com/acme/app/pull/{r.randint(100, 9999)}/commits/{_hexs(r, 40)}"),
            (
                "encoded",
                "data:image/png;base64," + base64.b64encode(bytes(r.randrange(256) for _ in range(300))).decode(),
            ),
            (
                "encoded",
                json.dumps(
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/jpeg",
                            "data": base64.b64encode(bytes(r.randrange(256) for _ in range(240))).decode(),
                        },
                    }
                ),
            ),
            ("encoded", "https://www.google.com/search?q=" + quote("how to rotate an api key safely?", safe="")),
            (
                "count",
                json.dumps(
                    {
                        "max_tokens": r.randint(1000, 64000),
                        "input_tokens": r.randint(1, 99999),
                        "password_min_length": 12,
                        "token_type": "bearer",
                        "auth": True,
                    }
                ),
            ),
        ]
    items += [
        (
            "example",
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        (
            "example",
            "export AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE\nexport AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        ),
        ("example", 'stripe.api_key = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"  # the docs\' test key'),
        (
            "example",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ),
        ("example", "OPENAI_API_KEY=sk-proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("example", "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("example", "ANTHROPIC_API_KEY=sk-ant-api03-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
        ("example", "SLACK_BOT_TOKEN=xoxb-your-bot-token-here"),
        (
            "example",
            "Your key looks like sk-ant-api03-... and starts with sk-ant-; GitHub tokens start with ghp_ or github_pat_.",
        ),
        ("example", "GOOGLE_API_KEY=AIzaSyEXAMPLEEXAMPLEEXAMPLEEXAMPLE123"),
        ("example", "api_key: sk-1234567890abcdef1234567890abcdef"),
        ("example", 'token = "ghp_1234567890abcdefghijklmnopqrstuvwxyz"'),
        ("placeholder", "OPENAI_API_KEY=your-api-key-here"),
        ("placeholder", 'api_key = "<YOUR_API_KEY>"'),
        ("placeholder", "token: ${GITHUB_TOKEN}"),
        ("placeholder", 'password = os.environ["DB_PASSWORD"]'),
        ("placeholder", "DB_PASSWORD=********"),
        ("placeholder", "AWS_SECRET_ACCESS_KEY=<redacted>"),
        ("placeholder", '"apiKey": "REPLACE_ME"'),
        ("placeholder", "client_secret: {{ .Values.clientSecret }}"),
        ("placeholder", "STRIPE_SECRET_KEY=sk_live_..."),
        ("placeholder", 'export ANTHROPIC_API_KEY="$(op read op://dev/anthropic/key)"'),
        ("placeholder", "password: process.env.DB_PASSWORD"),
        ("placeholder", "Authorization: Bearer <token>"),
        ("placeholder", 'curl -H "Authorization: Bearer $TOKEN" https://api.github.com/user'),
        ("fixture", 'def test_login():\n    client.login(username="alice", password="password")'),
        ("fixture", 'FAKE_API_KEY = "test-api-key"\nDUMMY_TOKEN = "dummy-token"'),
        ("fixture", 'api_key="fake_key_for_tests"'),
        ("fixture", 'mock_secret = "not-a-real-secret"'),
        ("fixture", 'token = "test_token_123"'),
        ("fixture", 'password: "changeme"'),
        ("word", "disk-usage-monitoring-service and task-runner-configuration-loader"),
        ("word", "the sk-learn pipeline; xoxo; AKIA is the prefix of an access key id; ghp is GitHub's"),
        ("word", "class TokenRefreshScheduler:  # refreshes the auth token every 3600 seconds"),
        ("word", "SECRET_KEY_BASE is set by the platform; see config/secrets.yml"),
        ("word", "passwordless login with magic links; the password_reset_token expires after 1 hour"),
    ]
    return [
        Sample(f"near-miss/{what}/{i}", f"near-miss:{what}", what, what, text) for i, (what, text) in enumerate(items)
    ]


def corpus() -> list[Sample]:
    return positives() + near_misses()
