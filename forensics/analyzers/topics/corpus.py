"""The corpus's own recurring topics: a sticky topic model fitted, without labels, on the corpus being analysed.

In task dialogue and in a team's assistant logs the same subjects come back across conversations (hotel,
train, taxi; the parser, the migrations, the i18n layer), and a switch is the user moving from one of them to
another. Which words carry a subject is a property of the corpus, not of a word list: "parking" belongs with
"hotel" in a travel corpus, "debounce" with "watcher" in a code base. A hidden-Markov topic model finds them:
each judged message has a hidden topic that tends to persist from one judged message to the next (the chain
is *sticky*), and its words come from that topic's word distribution. Fitted by EM (Baum-Welch) on the
corpus's judged messages, it gives every message the posterior probability that its topic differs from the
previous message's: that probability is a switch signal (``signals.CORPUS_FEATURES``).

Two chains are fitted, because words of two kinds recur:

- ``chain_topic`` (factorial): a sticky topic chain plus, per message, a free "function" topic (asking for a
  phone number, booking, thanking: words that recur in every subject). Function words then no longer look
  like a change of subject. Stickiness is fixed (``TOPIC_STAY``), so the chain cannot explain function words
  by switching back and forth.
- ``chain_plain``: one chain whose stickiness is learned; cheap, and it sees the function words too.

Both are deterministic (fixed initial seeds), fitted on at most ``FIT_UNITS`` messages of a stable sample of
conversations (a million-message warehouse costs the same as a mid-sized one), over the words that occur in
at least ``MIN_CONVERSATIONS`` conversations (a conversation's own names cannot recur, so they carry no
corpus topic; the lexical signals see them). A corpus too small to fit (fewer than ``MIN_UNITS`` messages
with such words) gets no model, and is judged by the mode's lexical twin (``model.load_models``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

FIT_UNITS = 20_000  # judged messages the model is fitted on (a stable sample of whole conversations)
MIN_UNITS = 600  # below this many judged messages with corpus words, no model: measured on the task sets, a
# model fitted on fewer (about 50 dialogues) marks worse than the lexical signals alone (docs/topics-evaluation.md)
MIN_CONVERSATIONS = 3  # a word recurring in fewer conversations is not a corpus topic word
MAX_VOCABULARY = 5_000  # most widespread words kept
TOPIC_STATES, FUNCTION_STATES, TOPIC_STAY = 12, 6, 0.85  # chain_topic: topics, function topics, P(topic stays)
PLAIN_STATES = 6  # chain_plain
ITERATIONS, TOLERANCE = 50, 1e-5  # EM stops at this many iterations or this relative log-likelihood change
SMOOTHING = 1e-2  # pseudo-count per word and topic
BATCH = 512  # conversations per forward-backward batch


@dataclass(frozen=True)
class Chain:
    """One fitted chain: log P(words of a message | state) comes from ``log_emission`` (states x vocabulary)."""

    log_emission: np.ndarray
    start: np.ndarray  # P(first state)
    transition: np.ndarray  # P(state -> state)
    same: np.ndarray  # 1 where two states share the topic (the factorial chain: same topic, any function)


@dataclass(frozen=True)
class CorpusTopics:
    """The fitted model: the corpus words and both chains (small: sent once to each worker)."""

    vocabulary: dict[str, int]
    chains: tuple[Chain, ...]
    units: int  # judged messages it was fitted on

    def switch_posteriors(self, conversation: Sequence[Sequence[str]]) -> list[tuple[float, ...]]:
        """Per judged message of one conversation (its words, in order): P(topic differs from the previous
        message's) under each chain; 0.0 for a message without corpus words (it is not in the chain)."""
        rows = [_columns(ws, self.vocabulary) for ws in conversation]
        inside = [i for i, r in enumerate(rows) if r]
        out = [(0.0,) * len(self.chains) for _ in rows]
        if len(inside) < 2:
            return out
        x = _matrix([rows[i] for i in inside], len(self.vocabulary))
        per = [_switches(c, x, np.array([0]), np.array([len(inside)])) for c in self.chains]
        for k, i in enumerate(inside):
            out[i] = tuple(float(p[k]) for p in per)
        return out


def sample_order(conversation_id: str) -> str:
    """A stable pseudo-random order of conversations for the fitting sample (not the id order: ids made of
    dates or sources would sample one period or one source)."""
    return hashlib.blake2b(conversation_id.encode(), digest_size=8).hexdigest()


def fit(conversations: Iterable[Sequence[Sequence[str]]]) -> CorpusTopics | None:
    """Fit both chains on conversations (each: its judged messages' words in order); None when too small."""
    convs = [list(c) for c in conversations]
    spread: Counter[str] = Counter()
    for c in convs:
        spread.update({w for ws in c for w in ws})
    words = [w for w, n in sorted(spread.items(), key=lambda kv: (-kv[1], kv[0])) if n >= MIN_CONVERSATIONS]
    vocabulary = {w: i for i, w in enumerate(sorted(words[:MAX_VOCABULARY]))}
    rows: list[list[int]] = []
    starts, lengths = [], []
    for c in convs:
        units = [r for r in (_columns(ws, vocabulary) for ws in c) if r]
        if len(units) >= 2:
            starts.append(len(rows))
            lengths.append(len(units))
            rows += units
    if len(rows) < MIN_UNITS:
        return None
    x = _matrix(rows, len(vocabulary))
    st, ln = np.array(starts), np.array(lengths)
    with one_thread():
        chains = (
            _fit(x, st, ln, TOPIC_STATES, FUNCTION_STATES, TOPIC_STAY, learn_stay=False, seed=1),
            _fit(x, st, ln, PLAIN_STATES, 1, 0.8, learn_stay=True, seed=0),
        )
    return CorpusTopics(vocabulary, chains, len(rows))


def one_thread() -> threadpool_limits:
    """BLAS on one thread while the chains run: their products are small (a batch of conversations x 72
    states), and OpenBLAS's threads spinning on them cost ten times the work on a shared 2-core machine (the fit
    of 3,520 messages: 18.8 CPU s with its default threads, 1.9 s on one; the same figures, each product is
    computed whole by one thread either way)."""
    return threadpool_limits(limits=1, user_api="blas")


def _columns(words: Iterable[str], vocabulary: dict[str, int]) -> list[int]:
    """A message's corpus words as matrix columns, in column order: a row's products then sum in the same order
    in every process (a set's order follows the string hash, which differs per process: the posteriors differed
    in their last digit from one report to the next)."""
    return sorted({vocabulary[w] for w in words if w in vocabulary})


@dataclass(frozen=True)
class Rows:
    """A 0/1 message x word matrix in compressed rows (each row's columns sorted, no repeats), with the two
    products the chains need. Each product adds a row's (or a column's) terms one after another in index order,
    as a compressed-row product does (scipy's ``csr_matrix @ dense`` and ``csr.T.tocsr() @ dense``, which this
    replaced bit for bit: tests/test_topics_corpus_rows.py): the posteriors are the same to the last digit."""

    indptr: np.ndarray  # row r's columns are indices[indptr[r]:indptr[r + 1]]
    indices: np.ndarray
    width: int

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.indptr) - 1, self.width

    def column_counts(self) -> np.ndarray:
        """How many rows hold each column (float, as the sum over rows of a 0/1 matrix)."""
        return np.bincount(self.indices, minlength=self.width).astype(float)

    def dot(self, dense: np.ndarray) -> np.ndarray:
        """``self @ dense`` (dense: width x k): per row, the sum of its columns' rows of ``dense``, in order."""
        return _sums(len(self.indptr) - 1, self._row_of(), self.indices, dense)

    def tdot(self, dense: np.ndarray) -> np.ndarray:
        """``self.T @ dense`` (dense: rows x k): per column, the sum of its rows' rows of ``dense``, in row order."""
        return _sums(self.width, self.indices, self._row_of(), dense)

    def _row_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))


def _sums(groups: int, into: np.ndarray, take: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """out[into[j]] += dense[take[j]] for j = 0, 1, ... in that order, per column of ``dense``: np.bincount adds its
    weights one after another in input order (np.add.reduceat does not add left to right and moved the last
    digit; np.add.at is exact but six to eleven times slower)."""
    columns = np.ascontiguousarray(dense.T)
    out = np.empty((dense.shape[1], groups))
    for k, column in enumerate(columns):
        out[k] = np.bincount(into, weights=column[take], minlength=groups)
    return np.ascontiguousarray(out.T)


def _matrix(rows: list[list[int]], width: int) -> Rows:
    indptr = np.cumsum([0] + [len(r) for r in rows])
    return Rows(indptr, np.concatenate(rows).astype(np.intp) if rows else np.zeros(0, np.intp), width)


def _fit(
    x: Rows,
    starts: np.ndarray,
    lengths: np.ndarray,
    topics: int,
    functions: int,
    stay: float,
    learn_stay: bool,
    seed: int,
) -> Chain:
    """Baum-Welch for a chain whose state is (topic, function): the topic is sticky, the function topic is drawn
    afresh for every message; a word comes from the topic's distribution or from the function topic's."""
    rng = np.random.default_rng(seed)
    n, v = x.shape
    total = x.column_counts() + 1e-3
    background = total / total.sum()
    phi = background * rng.gamma(1.0, 1.0, (topics, v))
    phi /= phi.sum(1, keepdims=True)
    psi = background * rng.gamma(1.0, 1.0, (functions, v))
    psi /= psi.sum(1, keepdims=True)
    p_topic, p_function = np.full(topics, 1 / topics), np.full(functions, 1 / functions)
    w_topic = 0.5
    same = np.kron(np.eye(topics), np.ones((functions, functions)))
    firsts = np.zeros(n, bool)
    firsts[starts] = True
    last_ll = None
    for _ in range(ITERATIONS):
        chain = _chain(phi, psi, w_topic, p_topic, p_function, stay, same)
        mix = np.exp(chain.log_emission)
        gamma, p_same, ll = _forward_backward(chain, x.dot(chain.log_emission.T), starts, lengths)
        share = (x.tdot(gamma).T / mix).reshape(topics, functions, v)  # E[word count] / P(word | state)
        c_topic = (share * (w_topic * phi[:, None, :])).sum(1)
        c_function = (share * ((1 - w_topic) * psi[None, :, :])).sum(0)
        w_topic = c_topic.sum() / (c_topic.sum() + c_function.sum())
        phi = (c_topic + SMOOTHING) / (c_topic + SMOOTHING).sum(1, keepdims=True)
        psi = (c_function + SMOOTHING) / (c_function + SMOOTHING).sum(1, keepdims=True)
        g = gamma.reshape(n, topics, functions)
        p_topic = (g.sum((0, 2)) + 1) / (n + topics)
        p_function = (g.sum((0, 1)) + 1) / (n + functions)
        if learn_stay:  # E[same topic] = stay + (1 - stay) * sum p^2
            q = float((p_topic**2).sum())
            stay = min(0.98, max(0.05, (float(p_same[~firsts].mean()) - q) / (1 - q)))
        if last_ll is not None and abs(ll - last_ll) < TOLERANCE * abs(last_ll):
            break
        last_ll = ll
    return _chain(phi, psi, w_topic, p_topic, p_function, stay, same)


def _chain(
    phi: np.ndarray,
    psi: np.ndarray,
    w_topic: float,
    p_topic: np.ndarray,
    p_function: np.ndarray,
    stay: float,
    same: np.ndarray,
) -> Chain:
    topics, functions = len(phi), len(psi)
    mix = w_topic * phi[:, None, :] + (1 - w_topic) * psi[None, :, :]
    moves = stay * np.eye(topics) + (1 - stay) * p_topic[None, :]
    transition = np.kron(moves, np.tile(p_function, (functions, 1)))
    return Chain(np.log(mix.reshape(topics * functions, -1)), np.kron(p_topic, p_function), transition, same)


def _switches(chain: Chain, x: Rows, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    _, p_same, _ = _forward_backward(chain, x.dot(chain.log_emission.T), starts, lengths)
    out = 1 - p_same
    out[starts] = 0.0
    return out


def _forward_backward(
    chain: Chain,
    log_e: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Scaled forward-backward over every conversation, batched by length. Returns the state posteriors
    (messages x states), P(same topic as the previous message) per message (1 for a first), and the
    log-likelihood."""
    n, s = log_e.shape
    a, a_same = chain.transition, chain.transition * chain.same
    gamma, p_same, ll = np.zeros((n, s)), np.ones(n), 0.0
    order = np.argsort(lengths, kind="stable")
    for b in range(0, len(order), BATCH):
        pick = order[b : b + BATCH]
        t_max = int(lengths[pick].max())
        steps = np.arange(t_max)
        valid = steps[None, :] < lengths[pick][:, None]
        idx = np.where(valid, starts[pick][:, None] + steps[None, :], 0)
        le = log_e[idx]
        peak = le.max(2, keepdims=True)
        e = np.where(valid[..., None], np.exp(le - peak), 1.0)
        alpha, scale = np.empty_like(e), np.ones(valid.shape)
        f = chain.start[None, :] * e[:, 0]
        scale[:, 0] = f.sum(1)
        alpha[:, 0] = f / scale[:, 0:1]
        for t in range(1, t_max):
            f = (alpha[:, t - 1] @ a) * e[:, t]
            ok = valid[:, t]
            scale[:, t] = np.where(ok, f.sum(1), 1.0)
            alpha[:, t] = np.where(ok[:, None], f / scale[:, t : t + 1], alpha[:, t - 1])
        beta, same = np.ones_like(e), np.ones(valid.shape)
        for t in range(t_max - 2, -1, -1):
            ok = valid[:, t + 1]
            eb = e[:, t + 1] * beta[:, t + 1]
            beta[:, t] = np.where(ok[:, None], (eb @ a.T) / scale[:, t + 1 : t + 2], 1.0)
            same[:, t + 1] = np.where(ok, (alpha[:, t] * (eb @ a_same.T)).sum(1) / scale[:, t + 1], 1.0)
        post = alpha * beta
        post /= post.sum(2, keepdims=True)
        gamma[idx[valid]] = post[valid]
        p_same[idx[valid]] = same[valid]
        ll += float((np.log(scale) * valid).sum() + (peak[..., 0] * valid).sum())
    return gamma, np.clip(p_same, 0.0, 1.0), ll
