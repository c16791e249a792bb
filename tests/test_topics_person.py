"""The person's own words (issue 24 item 4): cues count where the person asks, not in what they pasted; insisting
continues a topic; a new question with no cue is found by its content. Each case is a shape seen in the shared
real agent logs (docs/findings-evaluation.md)."""

from __future__ import annotations

from forensics.analyzers.schema import defaults
from forensics.analyzers.topics.infer import infer
from forensics.analyzers.topics.model import load_models
from forensics.analyzers.topics.settings import TopicSettings
from forensics.analyzers.topics.signals import Idf, Message, features, prepare
from forensics.text.cues import Cues
from forensics.text.prose import own_words, request_sentences

CUES = Cues.from_settings(TopicSettings.of(defaults()))


def _conversation(texts: list[tuple[str, str]]) -> tuple[list[Message], Idf]:
    msgs = [Message(i, role, text, role == "user") for i, (role, text) in enumerate(texts)]
    prepare(msgs)
    return msgs, Idf(m.tokens for m in msgs)


def test_own_words_leave_out_code_quotes_traces_and_tool_context() -> None:
    text = (
        "# Context from my IDE setup:\n\n## Open tabs:\n- a.ts\n\n## My request for Codex:\nWhy does this fail?\n"
        "```python\nneed_a = is_there_any()\n```\n> Is there any reason to need a cache?\n"
        'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "<ide_selection>def need_a(): pass</ide_selection>\n    indented = code"
    )
    assert own_words(text) == "Why does this fail?"
    assert own_words("> please review PoIValidator.ts") == "please review PoIValidator.ts"  # typed after a prompt


def test_a_long_message_is_searched_for_a_request_at_its_opening_and_close() -> None:
    middle = " ".join(f"Step {i} of the pasted guide says you need a key." for i in range(20))
    said = request_sentences(f"Read this guide. It is long. {middle} What should I do first?")
    assert said.startswith("Read this guide.") and said.endswith("What should I do first?")
    assert "need a key" not in said


def test_a_request_phrase_in_pasted_text_is_no_request() -> None:
    pasted = "Fix this please:\n```\n# is there any way we need a new cache here?\n```"
    assert CUES.signals(pasted, "")["request"] == 0.0
    assert CUES.signals("Is there any hotel with parking? I need a room.", "")["request"] == 1.0


def test_insisting_on_the_same_request_is_no_new_request() -> None:
    msgs, idf = _conversation(
        [
            ("user", "I need a refund for order 1042, the blender arrived broken."),
            ("assistant", "I can offer store credit for order 1042."),
            ("user", "No, I need a refund for order 1042, the blender is broken."),
            ("assistant", "I understand."),
        ]
    )
    f = features(msgs, idf, CUES)[2]
    assert f is not None and f["request"] == 0.0


def test_an_offer_on_every_reply_is_a_sign_off() -> None:
    turns: list[tuple[str, str]] = []
    for i in range(4):
        turns += [
            ("user", f"Please change seat {i} on my flight to an aisle seat."),
            ("assistant", f"Seat {i} changed. Let me know if you need further assistance."),
        ]
    msgs, idf = _conversation(turns)
    assert all(f is None or f["offered"] == 0.0 for f in features(msgs, idf, CUES))


def test_a_new_question_with_no_cue_is_found_by_its_content() -> None:
    msgs, idf = _conversation(
        [
            ("user", "My pygame sprite flickers when the window is resized, how do I fix the redraw loop?"),
            ("assistant", "Use a double buffer: call pygame.display.flip() once per frame after blitting everything."),
            ("user", "That fixed the flicker, the redraw loop works now."),
            ("assistant", "Good. The loop now redraws once per frame."),
            ("user", "Can you compare godot and unity?"),
            ("assistant", "Godot is open source and lightweight; Unity has a larger asset store and C# tooling."),
        ]
    )
    _, lexical = load_models("user")
    f = features(msgs, idf, CUES)[4]
    assert f is not None and f["fresh"] == 1.0 and lexical.score(f) < lexical.anchor  # the cue-less model misses it
    judged = infer(msgs, idf, lexical, CUES)
    assert [j.marker for j in judged] == [False, False, True]


def test_a_repeat_of_a_request_the_replies_took_up_insists_on_the_current_subject() -> None:
    """Codex 019d021f [322] -> [336]: the replies worked on the drag bug in between; the repeat is no return."""
    msgs, idf = _conversation(
        [
            ("user", "Nope, still cannot drag."),
            ("assistant", "I'm checking whether the nodes are draggable at all; the drag handle may not get events."),
            ("assistant", "I fixed the node state so drag keeps the selection. Refresh and test dragging again."),
            ("user", "nope, still cannot drag"),
            ("user", "Why does the export write the wrong date?"),
            ("assistant", "The drag handle now gets pointer events."),
            ("user", "Why does the export write the wrong date?"),
        ]
    )
    f = features(msgs, idf, CUES)
    assert f[3] is not None and f[6] is not None
    _, lexical = load_models("user")
    assert f[3]["cos_judged"] > 0.9 and f[3]["insists"] < 0.6  # only "nope" was left out by the replies
    assert lexical.score(f[3]) < lexical.anchor
    assert f[6]["insists"] > 0.9  # the replies never said a word of the date question: insisting on it moves there


def test_accepting_what_the_reply_offered_is_no_new_request() -> None:
    offer = (
        "assistant",
        "Done: the machine control fields are in the GUI. If you want more structured fields, I can "
        "expand the schema and the GUI to cover camera triggers too.",
    )
    accept = features(
        *_conversation(
            [
                ("user", "Put the machine control fields in the GUI."),
                offer,
                ("user", "Yes, please do expand it and start a peripherals tab for them."),
            ]
        ),
        CUES,
    )[2]
    assert accept is not None and accept["request"] == 0.0
    more = features(
        *_conversation(
            [
                ("user", "Put the machine control fields in the GUI."),
                offer,
                ("user", "Yes, please expand the schema. I also need a new exporter for Cura."),
            ]
        ),
        CUES,
    )[2]
    assert more is not None and (more["request"] or more["addition"])  # the added request is in its own sentence


def test_what_about_another_name_asks_the_last_question_again() -> None:
    asked = [
        ("user", "Which is the best gemini assistant extension for vscode?"),
        ("assistant", "Gemini Code Assist is Google's own; the CLI companion pairs with Gemini CLI."),
    ]
    f = features(*_conversation([*asked, ("user", "what about \nshishirregmi.generate-code-gemini?")]), CUES)[2]
    assert f is not None and f["addition"] == 0.0 and f["ack_then_question"] == 0.0  # a line break ends no sentence
    g = features(
        *_conversation([*asked, ("user", "What about adding a release pipeline with signed builds and changelogs?")]),
        CUES,
    )[2]
    assert g is not None and g["addition"] == 1.0  # more than a name after the cue: an added subject


def test_an_added_request_about_the_thing_just_worked_on_is_the_next_step() -> None:
    done = [
        ("user", "I would like to add dev or staging or prod to the title according to the build"),
        ("assistant", "I set document.title from the build environment in App.jsx."),
    ]
    f = features(
        *_conversation(
            [
                *done,
                ("user", "very well. now I would like this variable to be used for the title displayed in the page"),
            ]
        ),
        CUES,
    )[2]
    assert f is not None and f["addition"] == 0.0
    g = features(
        *_conversation([*done, ("user", "very well. now I would like an e2e test suite for the whole title feature")]),
        CUES,
    )[2]
    assert g is not None and g["addition"] == 1.0  # no pointing back: an added deliverable


def test_a_pasted_name_with_a_word_the_talk_used_is_no_new_question() -> None:
    """Gemini CLI checkpoint: a pasted package listing, then "which one do I install?", after a talk about it."""
    msgs, idf = _conversation(
        [
            ("user", "What is kvantum?"),
            ("assistant", "Kvantum is an SVG-based theme engine for Qt applications."),
            ("user", "Does it slow my computer down?"),
            ("assistant", "Hardly: it only works when widgets are drawn."),
            (
                "user",
                "extra/kvantum-qt5 1.1.5-1 [366.55 KiB 994.19 KiB]\n 1 extra/kvantum; which flavour installs cleanly?",
            ),
        ]
    )
    f = features(msgs, idf, CUES)[4]
    assert f is not None and f["fresh"] == 0.0 and f["ack_then_question"] == 0.0


def test_a_negated_request_asks_for_nothing() -> None:
    """Declining what was offered ("I don't need a table, but ...") is no new request (issue 43: MultiWOZ's false
    switches); a negation further back, or a word that only contains one (特别), leaves the request."""
    for declined in (
        "I don't need a table right now, but I do need the postcode.",
        "I do n't need a booking , just the address .",
        "We do not really want a new API for this.",
        "不需要一个导游，告诉我地址就行。",
    ):
        assert CUES.signals(declined, "")["request"] == 0.0, declined
    for asked in (
        "I don't know the area. Can you find me a hotel?",
        "好。女朋友特别说想找一个能走1小时的地方。",
        "I could use some help finding a room in the east.",
        "I was wondering if there are any parks on the south side.",
        "No, that's ok. I actually need to book a taxi to leave by 21:00.",
        "Can you also give me information on the mumford theatre?",
    ):
        assert CUES.signals(asked, "")["request"] == 1.0, asked
    assert CUES.signals("It would need to be a cheap guesthouse, is that one?", "")["request"] == 0.0  # a constraint
    assert CUES.offers("You 're welcome . What else can I help you with ?")


def test_booking_the_thing_in_play_is_no_new_request() -> None:
    """A request whose object books what is being discussed ("a table for 7", "a reference number", "订一间房") acts
    on the current request; booking a new thing ("book a taxi"), searching for one ("finding a room") or building
    one ("add a table") is a new request (issue 43: MultiWOZ's false switches were bookings). Booking what is in play
    ("book me for one", "book it") points back at it, as "it" does."""
    for booking in (
        "I need a table for 7 at 11:30 on Thursday .",
        "I would like to book a table for 5 people .",
        "Can you make a reservation for Saturday for 7 people ?",
        "Could you make a booking for 6 people and give me the reference number ?",
        "Is there a reference number I need ?",
        "I need a room for one person starting sunday for 3 nights",
        "Yes , please I need tickets for all 6 of us",
        "帮我订一间房，两晚。",
        "I'd like a table for 2 at 19:00 .",
    ):
        assert CUES.signals(booking, "")["request"] == 0.0, booking
    for asked in (
        "Can you book a taxi for me ?",
        "I would also like to book a train departing from Cambridge on Saturday .",
        "I need to find a room in the north as well .",
        "Please add a table of contents to the README.",
        "Now create a booking form for the clinic.",
        "帮我找一个票价免费的景点。",
        "I 'd like a taxi to take me from the hotel to Curry Garden .",
        "I'd like an expensive restaurant in the west.",
        "Can you tell me about a hotel called the Avalon ?",
    ):
        assert CUES.signals(asked, "")["request"] == 1.0, asked
    for back in (
        "Could you book me for one on Friday ?",
        "Will you book it for a party of 7 .",
        "Can you reserve a table there ?",
        "I 'd like to make the reservation now .",
        "Can you make a reservation for Saturday for 7 people ?",
        "Sounds perfect . Could you make me a booking for 4 people ?",
    ):
        assert CUES.signals(back, "")["reference"] == 1.0, back
    assert (
        CUES.signals("Can you book me a taxi to the museum ?", "")["reference"] == 0.0
    )  # a new thing, not the one in play
    # a reservation named, not made: no reference back ("a booking" in a new request, a question about one)
    for named in ("Do I need a reservation for the museum ?", "Now create a booking form for the clinic."):
        assert CUES.signals(named, "")["reference"] == 0.0, named


def test_a_bare_yes_accepts_with_the_sentence_after_it() -> None:
    """ "Yes. Can you make a reservation for 3?" after "Would you like me to make a reservation?" takes the proposal
    up, as "Yes, please make it" does; "booking" takes up "book". A new subject after the yes stays a request."""

    def request(reply: str, person: str) -> float:
        f = features(
            *_conversation([("user", "I need a cheap Thai restaurant."), ("assistant", reply), ("user", person)]), CUES
        )[2]
        assert f is not None
        return f["request"] + f["addition"]

    assert (
        request(
            "Sala Thong is cheap. Would you like me to make a reservation ?",
            "Yes . Can you make a reservation for 3 people ?",
        )
        == 0.0
    )
    assert (
        request("Sala Thong is cheap. Would you like me to book it ?", "Yes . I need a booking for 6 people .") == 0.0
    )
    assert request("Sala Thong is cheap. Would you like me to book it ?", "Yes . I also need a train to London .") > 0.0


def test_a_booking_of_the_thing_in_play_gives_its_particulars() -> None:
    """Booking what is being discussed, with only its particulars ("book it for a party of 7", "a stay for eight"
    after "a place to stay"), serves the current request whatever its words; booking a thing the conversation has
    not named, another booking added ("I'm also looking to book a room at ..."), or a request beside it is new
    (issue 43: MultiWOZ's false switches)."""
    used = {"stay", "hotels", "anatolia", "expensive"}.__contains__
    for booking in (
        "Will you book it for a party of 7 . 5 days beginning Friday .",
        "Could you book a stay for eight , starting that same day ?",
        "Firat , lets book the anatolia for 2 people on Saturday at 16:30 .",
        "Can you make a reservation for Friday at 17:15 for 3 people ?",
        "Please , book for 7 people at 20:30 pm on Saturday . I need the reference number .",
        "Yes , I would like to book starting Friday , for four nights and five people please .",
        "I 'll need it booked for Saturday , 4 nights , and 8 people . Can I have the reference number please ?",
        "Book rooms for 3 people for 4 nights starting Sunday , please .",
        "Can you book that for me . Monday , 2 nights , 7 people ? I 'll also need the reference number please ?",
        "I would like to book one of the hotels . I will need it for 4 people for 2 nights .",
    ):
        assert CUES.books_in_play(booking, used), booking
    for new in (
        "Can you book me a taxi to the museum ?",
        "I also need to book a train on the same day .",
        "Thank you . I 'm also looking to book a room at the autumn house hotel .",
        "Please book it . I also need a taxi .",
        "I am looking for a restaurant named la mimosa and I would like to book a table for 7 people .",
        "I need to book a expensive hotel that has free wifi , can you help me ?",  # "hotel" not named yet
        "I read a book about Cambridge for fun .",  # the noun, not the act
        "What is the address of the hotel ?",  # no booking at all
    ):
        assert not CUES.books_in_play(new, used), new


def test_a_booking_of_a_word_the_conversation_used_in_another_form_books_the_thing_in_play() -> None:
    """ "a stay" after the reply's "staying": the booking object is compared with the conversation's words without
    their endings (signals._root); a word the conversation never used in any form is still a new thing (issue 43)."""

    def books(reply: str) -> bool:
        msgs, idf = _conversation(
            [
                ("user", "I 'm looking for a particular hotel - hobsons house ."),
                ("assistant", reply),
                ("user", "Could you book a stay for eight , starting that same day ?"),
            ]
        )
        f = features(msgs, idf, CUES)[2]
        assert f is not None
        return bool(f["books_in_play"])

    assert books("Is there a particular room that you would be interested in staying ?")
    assert books("Is there a particular room you would like for your stay ?")
    assert not books("It is a guesthouse in the north . What else would you like to know ?")


def test_accepting_the_offered_booking_with_only_its_particulars_books_the_thing_in_play() -> None:
    """ "may I book that for you?" "Yes please, for 6 people and 2 nights starting Saturday. Could I also get the
    reference number?": the offer accepted with the booking's particulars alone is the request being served; not an
    acceptance that goes on to a new subject, one that asks for something else, nor an answer to a reply that
    offered no booking (issue 43: MultiWOZ's false switches)."""

    def books(reply: str, turn: str) -> bool:
        msgs, idf = _conversation(
            [("user", "I need an expensive hotel in the west ."), ("assistant", reply), ("user", turn)]
        )
        f = features(msgs, idf, CUES)[2]
        assert f is not None
        return bool(f["books_in_play"])

    offer = "I have the Huntingdon Marriott . may I book that for you ?"
    assert books(
        offer, "Yes please , for 6 people and 2 nights starting Saturday . Could I also get the reference number ?"
    )
    assert books(
        "Curry Garden is expensive . Would you like to make a booking ?",
        "Yes please for 3 people at 17:45 on a Sunday .",
    )
    assert books(offer, "Sure , eight people , three nights from Friday .")
    assert not books(offer, "Yes 5 please . Do you know the Williams Art & Antiques ?")  # a new subject
    assert not books(offer, "Yes please , for 2 people . I also need a taxi .")
    assert not books(offer, "Not yet . For 2 people , what is the price ?")  # no acceptance
    assert not books("I have the Huntingdon Marriott . It has free parking .", "Yes please , for 6 people .")
    assert not books("Would you like the phone number ?", "Yes please , for 6 people .")  # no booking offered


def test_a_retried_search_after_nothing_found_is_the_choice_asked_for() -> None:
    """ "No steakhouses, something else perhaps?" "Are there any Portuguese restaurants?": the request is the other
    choice the reply asked for, the same search retried; after a reply that offered help in general, only a request
    that asks for the search again and names a word of it; not once the person declines the choice or adds a request
    (issue 43: MultiWOZ's false switches)."""
    from forensics.analyzers.topics.signals import retries

    def reads(reply: str, turn: str) -> bool:
        msgs, idf = _conversation(
            [("user", "I want a steakhouse in the centre ."), ("assistant", reply), ("user", turn)]
        )
        f = features(msgs, idf, CUES)[2]
        assert f is not None
        return retries(msgs[2], msgs[1], f, msgs[0]) and bool(f["retries"])

    assert reads("no I am sorry no steakhouses , something else perhaps ?", "Are there any Portuguese restaurants ?")
    assert reads("Unfortunately there are none . Would you like to try a different cuisine ?", "How about Turkish ?")
    assert not reads("There is no entrance fee . Is there anything else today ?", "I need a taxi to the hotel .")
    assert not reads("No steakhouses . Can I help you with something else ?", "Are there any Italian places ?")
    assert not reads("They do not open until 10 , can I try another time ?", "No , that 's ok . I need a taxi .")
    assert not reads("No steakhouses . Something else ?", "I also need a hotel in the north .")
    assert not reads("I found 3 steakhouses . Would you like another area ?", "Are there any Italian places ?")
    # a general offer closes the reply: the request retries the search when it asks for one again and names a word of
    # the search that found nothing (the person's last turn with a topic), not when it asks about something new
    general = "Unfortunately , there is nothing that meets your criteria . Is there anything else I can help you with ?"
    assert reads(general, "Is there a steakhouse in the cheaper price range ?")
    assert reads(general, "Since there are none in the centre , is there any Italian restaurant ?")
    assert reads(general, "How about a steakhouse in the north ?")
    assert not reads(general, "Are there any museums ?")
    assert not reads(general, "I need a taxi to the centre .")  # no search asked for again
    assert not reads(general, "No thanks . Is there a steakhouse in the north ?")  # the choice declined first


def test_nothing_found_said_with_a_contraction_is_read() -> None:
    """ "There isn't one", "we don’t have any": "n't" ends a word and has no word boundary before its "n", so the found
    nothing cue reads it without one (MultiWOZ's tokenized "is n't" and "do nt" were read before; untokenized text
    was not, issue 43); a word that merely ends in "nt" ("restaurant") is no such cue."""
    from forensics.analyzers.topics.signals import _FOUND_NOTHING

    for reply in ("Sorry, there isn't a steakhouse.", "We don’t have any.", "I couldn't find one.", "is n't", "do nt"):
        assert _FOUND_NOTHING.search(reply), reply
    assert not _FOUND_NOTHING.search("I found a restaurant in the centre, want its address?")
    msgs, idf = _conversation(
        [
            ("user", "I want a steakhouse in the centre."),
            ("assistant", "Sorry, there isn't a steakhouse there. Would you like a different cuisine?"),
            ("user", "Are there any Portuguese restaurants?"),
        ]
    )
    f = features(msgs, idf, CUES)[2]
    assert f is not None and f["retries"] == 1.0


def test_a_new_request_after_a_content_free_turn_is_marked_in_a_booking_dialogue() -> None:
    """ "Thank you so much !" carries no topic; the request after it ("I also need a train") is read against the last
    turn with a topic and marked, in the user mode off work (a person booking with an assistant) as at work; "How
    about 10:00 then ?" carries none either, and booking the train after it continues. Without the request scorer
    (``work_model``: the user mode's) the seed's rule holds: no marker after a content-free turn (issue 43, woz7)."""
    from forensics.analyzers.topics.model import load_model

    msgs, idf = _conversation(
        [
            ("user", "I need a cheap hotel in the north with free parking ."),
            ("assistant", "The Acorn Guest House is cheap and has free parking . Would you like to book it ?"),
            ("user", "Thank you so much !"),
            ("assistant", "You 're welcome . Is there anything else I can help you with ?"),
            ("user", "I also need a train to London on Friday ."),
            ("assistant", "TR1234 leaves at 09:00 ."),
            ("user", "How about 10:00 then ?"),
            ("assistant", "TR2345 leaves at 10:00 ."),
            ("user", "Great , book it for 2 people please ."),
        ]
    )
    lexical = load_models("user")[1]
    marked = {j.position: (j.topic, j.marker) for j in infer(msgs, idf, lexical, CUES, work_model=load_model("work"))}
    assert marked == {0: ("T1", False), 2: (None, False), 4: ("T2", True), 6: (None, False), 8: ("T2", False)}
    seed = {j.position: j.marker for j in infer(msgs, idf, lexical, CUES)}
    assert not any(seed.values())
