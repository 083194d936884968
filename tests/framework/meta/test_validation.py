"""framework.meta.validation: apimachinery's name and label rules, with upstream's exact texts."""

from framework.meta import validation as v

SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def test_dns1123_label():
    assert v.is_dns1123_label("my-name") == []
    assert v.is_dns1123_label("a.b") == ["must not contain dots"]
    assert v.is_dns1123_label("My_Name") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
        "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]
    assert v.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


def test_qualified_name():
    assert v.is_qualified_name("example.com/MyName") == []
    assert v.is_qualified_name("Example.com/" + "x" * 64) == [
        "prefix part " + SUBDOMAIN_ERROR,
        "name part must be no more than 63 characters",
    ]


def test_label_value():
    assert v.is_valid_label_value("") == []
    assert v.is_valid_label_value("-bad") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
        "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]


def test_config_map_key():
    assert v.is_config_map_key("key.name") == []
    assert v.is_config_map_key("..") == ["must not be '..'"]
