"""Canonical identifier keys: every surface form meets, look-alikes never do."""

from __future__ import annotations

import pytest

from unrecall.recall.identifiers import extract, keys, query_keys

SAME = [
    (
        "email",
        [
            "alice@acme.io",
            "Alice@ACME.io",
            "ALICE @ Acme.IO",
            '"alice+news@acme.io"',
            "<alice@acme.io>",
            "alice (at) acme.io",
        ],
    ),
    (
        "phone",
        ["(415) 555-0132", "+1 415 555 0132", "415.555.0132", "+14155550132", "1-415-555-0132"],
    ),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"]),
    ("ssn", ["123-45-6789", "123 45 6789"]),
    ("card", ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111"]),
    ("iban", ["DE89 3704 0044 0532 0130 00", "de89370400440532013000"]),
    ("handle", ["@alice_w", "@Alice_W"]),
    (
        "url",
        ["https://www.example.com/login/", "http://example.com/login", "www.example.com/login"],
    ),
    ("ticket", ["TKT-100", "TKT 100", "tkt-100", "TKT#100"]),
    ("path", ["/etc/app/conf", "/etc/app/conf/"]),
    ("number", ["12345"]),
]

DIFFERENT = [
    ("alice@acme.io", "alice.smith@acme.io"),
    ("alice@acme.io", "malice@acme.io"),
    ("12345", "123456"),
    ("TKT-100", "TKT-1000"),
    ("example.com", "example.com.uk"),
    ("/etc/app/conf", "/etc/app/conf.bak"),
    ("(415) 555-0132", "(415) 555-0133"),
    ("@alice", "@alice_w"),
    ("sk-abc123def456ghi789jkl", "sk-abc123def456ghi789jklm"),
]


@pytest.mark.parametrize(("kind", "forms"), SAME)
def test_surface_forms_share_one_key(kind: str, forms: list[str]) -> None:
    found = [{k for k in keys(f"it is {form} here") if k.startswith(kind + ":")} for form in forms]
    assert all(len(f) == 1 for f in found), found
    assert len(set().union(*found)) == 1, found


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_look_alikes_never_share_a_key(a: str, b: str) -> None:
    ka, kb = keys(f"value {a} end"), keys(f"value {b} end")
    assert ka and kb
    assert not ka & kb


def test_sentence_punctuation_is_not_part_of_the_identifier() -> None:
    assert keys("Write to alice@acme.io.") == {"email:alice@acme.io"}
    assert "domain:example.com" in keys("I like example.com, really.")


def test_file_names_are_not_domains() -> None:
    assert keys("run script.py and notes.txt") == set()


def test_luhn_invalid_digits_are_not_cards() -> None:
    assert not any(k.startswith("card:") for k in keys("code 4111 1111 1111 1112"))


def test_spans_point_at_the_identifier() -> None:
    text = "mail me: Bob@Example.org today"
    (ident,) = extract(text)
    assert text[ident.start : ident.end] == "Bob@Example.org"


def test_bare_query_token_names_a_handle() -> None:
    assert query_keys("alice_w") == {"handle:alice_w"}
    assert query_keys("@alice_w") == {"handle:alice_w"}
    assert query_keys("ALICE @ Acme.IO") == {"email:alice@acme.io"}


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("License key: ABCD-EFGH-1234-5678", "abcd efgh 1234 5678"),
        ("My business bank's BIC is NWBKGB2L", "nwbk gb 2l"),
        ("My car registration is AB12 CDE", "ab12cde"),
        ("Order #A-7734-QX was refunded", "order a7734qx"),
        ("My tax ID is 912-74-3318", "912743318"),
        ("The lock's MAC address is 3C:71:BF:0A:44:E2", "3c-71-bf-0a-44-e2"),
        ("My Paris landline is +33 1 99 00 12 34", "01 99 00 12 34"),
        ("The clinic's number is 020 7946 0958", "+44 (0)20 7946 0958"),
        ("Passport no. 12AB34567 belongs to my son", "passport 12 ab 34567"),
    ],
)
def test_chunked_and_national_forms_meet(stored: str, query: str) -> None:
    assert keys(stored) & query_keys(query)


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("License key: ABCD-EFGH-1234-5679", "abcd efgh 1234 5678"),
        ("My car registration is AB12 CDF", "ab12cde"),
        ("My wife's tax ID is 912-74-3381", "912743318"),
        ("The thermostat's MAC is 3C:71:BF:0A:44:E7", "3c-71-bf-0a-44-e2"),
        ("My Paris office line is +33 1 99 00 12 43", "01 99 00 12 34"),
    ],
)
def test_chunked_lookalikes_stay_apart(stored: str, query: str) -> None:
    assert not keys(stored) & query_keys(query)


def test_a_tagged_address_names_only_itself() -> None:
    tagged, base = "Newsletters go to sam+news@fern.example", "My address is sam@fern.example"
    assert keys(tagged) & query_keys("SAM+NEWS @ FERN.EXAMPLE")
    assert not keys(base) & query_keys("SAM+NEWS @ FERN.EXAMPLE")
    assert keys(tagged) & query_keys("sam@fern.example")
    assert keys(base) & query_keys("sam@fern.example")


def test_dates_are_not_phone_numbers() -> None:
    assert not any(k.startswith("phone") for k in keys("on 2024-05-01 and 05/01/2024"))


def test_phone_extensions_are_other_lines() -> None:
    main, ext = "Front desk: +44 20 7946 0018", "Night porter: +44 20 7946 0018 ext 2"
    assert keys(main) & query_keys("+44 20 7946 0018")
    assert not keys(ext) & query_keys("+44 20 7946 0018")
    assert keys(ext) & query_keys("+44 20 7946 0018 ext 2")
    assert not keys(main) & query_keys("+44 20 7946 0018 ext 2")


def test_a_page_is_not_its_whole_domain() -> None:
    page, sibling = "repo github.com/kit/notes", "archive github.com/kit/notes-archive"
    assert keys(page) & query_keys("github.com/kit/notes")
    assert not keys(sibling) & query_keys("github.com/kit/notes")
    assert keys(sibling) & query_keys("github.com")  # the domain names all its pages


def test_years_are_not_identifiers() -> None:
    assert keys("In 2021 I lived in Lyon, born 1985") == set()
    assert keys("order 2021 ships") == set()  # indistinguishable from a year
    assert keys("order 20215 ships") == {"number:20215", "compact:20215", "serial:20215"}


def test_a_chunk_of_a_longer_id_is_not_a_number_of_its_own() -> None:
    a, b = "Priya's mobile is +44 7700 940999.", "Dagny's mobile is +44 7700 940680."
    assert not keys(a) & keys(b)
    assert not keys(b) & query_keys("+44 7700 940999")
    assert "number:1234" not in keys("key ABCD-EFGH-1234-5678")


@pytest.mark.parametrize("number", ["+683 4002", "+290 22123", "+500 31234"])
def test_the_shortest_international_numbers_are_still_phones(number: str) -> None:
    # The phone matcher is skipped below six digits: the shortest valid
    # numbers (Niue, Saint Helena, Falklands) have seven or eight.
    assert any(k.startswith("phone:+") for k in keys(f"my line is {number} now"))


def test_clock_times_in_either_form_share_a_key() -> None:
    from unrecall.recall.identifiers import keys

    assert "time:14:30" in keys("the dentist is at 14:30") & keys("moved to 2:30 PM")
    assert "time:09:15" in keys("standup 9:15 am") and "time:21:15" in keys("call at 9:15 p.m.")
    assert not {k for k in keys("ratio 13:45 PM") if k.startswith("time:")}


def test_dashed_codes_of_three_parts_are_one_identifier() -> None:
    from unrecall.recall.identifiers import keys

    assert "code:QX-ORBIT-2031" in keys("build QX-ORBIT-2031 shipped")
    assert "code:QX-ORBIT-2031" not in keys("build ORBIT-2031 shipped")
