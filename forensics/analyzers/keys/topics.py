"""The config sections and keys of the topics analyzer (``forensics.analyzers.topics``), declared apart from its
code: its declaration holds these, and the config schema (``forensics.analyzers.schema``) reads them without
importing the analyzer."""

from __future__ import annotations

from forensics.config import ROLES, Key
from forensics.text import cues

SECTIONS: dict[str, str] = {"topic": "Topic-switch detection (docs/definitions.md#topic-switches)."}
KEYS: tuple[Key, ...] = (
    Key("topic", "marker_enabled", True, "mark topic switches for the harness", "", "TOPIC_MARKER_ENABLED"),
    Key(
        "topic",
        "open_domain",
        False,
        "mark switches in open-domain talk too (the dialogue mode: roles with "
        '"assistant"); off: such talk is not judged and nothing is marked, since on PersonaChat chit-chat '
        "(TIAGE) the marker's F1 is under marking every turn (docs/topics-evaluation.md, issue 43)",
        "",
    ),
    Key(
        "topic",
        "min_confidence",
        0.7,
        "both messages need a topic this confident for a switch marker",
        "probability",
        "TOPIC_MIN_CONFIDENCE",
    ),
    Key("topic", "roles", ["user"], "roles whose messages are judged and may start a topic", "roles", choices=ROLES),
    Key(
        "topic",
        "switch_score",
        0.39,
        "when only user turns are judged (assistant logs): a judged message whose "
        "switch score reaches this starts a new topic; the fitted operating point (weights.json modes.user "
        "anchor): lower trades precision for recall",
        "score in [0, 1]",
    ),
    Key(
        "topic",
        "dialogue_switch_score",
        0.32,
        "the same when assistant turns are judged too (human-human "
        'dialogue, roles with "assistant"); weights.json modes.dialogue anchor',
        "score in [0, 1]",
    ),
    Key(
        "topic",
        "embedding",
        False,
        "also judge cohesion by sentence embeddings (needs the optional extra "
        "forensics[embedding]; used where the judging mode has weights fitted with it: dialogue)",
        "",
    ),
    Key(
        "topic",
        "embedding_switch_score",
        0.29,
        "the switch score threshold when the embedding signals are used (weights.json modes.dialogue+embedding anchor)",
        "score in [0, 1]",
    ),
    Key(
        "topic",
        "lexicon",
        {},
        "optional table topic = [phrases]: a message containing a phrase has that topic",
        "phrases",
    ),
    Key(
        "topic",
        "request_cues",
        cues.REQUEST_CUES,
        "a judged message matching one of these opens a request "
        '(a verb and an indefinite object: "looking for a", "推荐一家"; not right after a negation: '
        '"I do not need a table", "不需要一个")',
        "regexes",
        validate=cues.invalid_regex,
    ),
    Key(
        "topic",
        "addition_cues",
        cues.ADDITION_CUES,
        '... adds a request ("I also need", "另外")',
        "regexes",
        validate=cues.invalid_regex,
    ),
    Key(
        "topic",
        "reference_cues",
        cues.REFERENCE_CUES,
        '... refers back to the current subject ("it", "这家")',
        "regexes",
        validate=cues.invalid_regex,
    ),
    Key(
        "topic",
        "offer_cues",
        cues.OFFER_CUES,
        'a message before a judged one matching these (in its last 200 characters) offers more help ("anything else?")',
        "regexes",
        validate=cues.invalid_regex,
    ),
    Key(
        "topic",
        "proposal_cues",
        cues.PROPOSAL_CUES,
        "a reply closing with one of these proposes to do something "
        '("I can expand the schema", "需要我帮你预订吗"): a request in the sentence that accepts it ("yes, please '
        'do") takes the proposal up',
        "regexes",
        validate=cues.invalid_regex,
    ),
    Key(
        "topic",
        "social_words",
        cues.SOCIAL_WORDS,
        "a judged message whose content words are all among these "
        "(thanks, bye, 好的) closes or acknowledges: it carries no topic and never starts one",
        "words",
    ),
    Key(
        "topic",
        "register_words",
        cues.REGISTER_WORDS,
        "how people talk rather than what about (sorry, "
        "frustrated, urgent, kindly): left out of the corpus topic model's words, so it learns subjects, not "
        "registers",
        "words",
    ),
)
