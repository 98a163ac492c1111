# Source of the Jinja2 conformance corpus. gen.py renders every case with
# Jinja2 and writes cases.jsonl; edit this file, then run
# `python3 tests/jinja/gen.py`.
#
# Each case is (name, template) or (name, template, context). Contexts are
# plain JSON (dicts, lists, str, int, float, bool, None) and their key order
# is kept in the output. Names are unique, grouped "area/topic/detail".
# Nothing here says what the result is: Jinja2 decides, gen.py records it.

USERS = [
    {"name": "alice", "age": 31, "active": True, "role": "admin"},
    {"name": "Bob", "age": 25, "active": False, "role": "user"},
    {"name": "carol", "age": 42, "active": True, "role": "user"},
]
ITEMS = [
    {"title": "Pen", "price": 1.5, "qty": 4},
    {"title": "Book", "price": 12, "qty": 1},
    {"title": "Bag", "price": 30.25, "qty": 2},
]
RESULTS = [
    {"title": "Jinja docs", "url": "https://jinja.palletsprojects.com/", "content": "Jinja is a fast, expressive, extensible templating engine.", "score": 0.92},
    {"title": "Dify workflows", "url": "https://docs.dify.ai/", "content": "A template node renders Jinja2 with the variables of earlier nodes.", "score": 0.81},
    {"title": "Unrelated", "url": "https://example.com/", "content": "Nothing to see here.", "score": 0.12},
]

CASES = [
    # ------------------------------------------------------------------ text
    ("text/plain", "hello world"),
    ("text/empty", ""),
    ("text/unicode", "héllo wörld — 你好 🎉"),
    ("text/newline/single_trailing_removed", "hello\n"),
    ("text/newline/double_trailing_keeps_one", "hello\n\n"),
    ("text/newline/only_newline", "\n"),
    ("text/newline/leading_kept", "\nhello"),
    ("text/newline/inner_kept", "a\nb\n\nc"),
    ("text/newline/after_expr_removed", "{{ x }}\n", {"x": 1}),
    ("text/newline/after_block_removed", "{% if true %}yes{% endif %}\n"),
    ("text/newline/crlf_normalised", "a\r\nb\r\n"),
    ("text/newline/cr_normalised", "a\rb"),
    ("text/newline/in_value_untouched", "{{ x }}", {"x": "a\r\nb\n"}),
    ("text/newline/trailing_from_value_kept", "{{ x }}", {"x": "a\n"}),
    ("text/newline/spaces_after_newline_kept", "a\n  "),
    ("text/lone_braces", "{ } {x} }} %} #}"),
    ("text/brace_percent_text", "100% {not a tag}"),

    # ------------------------------------------------------------ delimiters
    ("syntax/expr/variable", "Hello {{ name }}!", {"name": "World"}),
    ("syntax/expr/no_spaces", "{{name}}", {"name": "x"}),
    ("syntax/expr/many_spaces", "{{     name     }}", {"name": "x"}),
    ("syntax/expr/multiline", "{{\n  name\n}}", {"name": "x"}),
    ("syntax/expr/adjacent", "{{ a }}{{ b }}", {"a": 1, "b": 2}),
    ("syntax/stmt/if_inline", "a{% if true %}b{% endif %}c"),
    ("syntax/stmt/multiline_tag", "{% if\n true\n %}ok{% endif %}"),
    ("syntax/comment/simple", "a{# note #}b"),
    ("syntax/comment/multiline", "a{# line1\nline2 #}b"),
    ("syntax/comment/contains_tags", "a{# {{ x }} {% if %} #}b"),
    ("syntax/comment/newline_after_kept", "a{# c #}\nb"),
    ("syntax/comment/ws_minus", "a  {#- c -#}  b"),
    ("syntax/string_with_delims", "{{ '{{ x }}' }}"),
    ("syntax/string_with_close", "{{ '}}' }}"),

    # ---------------------------------------------------- whitespace control
    ("ws/expr/left", "a   {{- x }}   b", {"x": "X"}),
    ("ws/expr/right", "a   {{ x -}}   b", {"x": "X"}),
    ("ws/expr/both", "a \n {{- x -}} \n b", {"x": "X"}),
    ("ws/stmt/left", "a\n  {%- if true %}b{% endif %}"),
    ("ws/stmt/right", "{% if true -%}\n   b{% endif %}"),
    ("ws/stmt/both_in_loop", "{% for i in [1, 2, 3] -%}\n  {{ i }}\n{%- endfor %}"),
    ("ws/stmt/block_newline_kept", "{% if true %}\nyes\n{% endif %}\nend"),
    ("ws/stmt/for_newlines_kept", "{% for i in [1, 2] %}\n- {{ i }}\n{% endfor %}\n"),
    ("ws/stmt/indent_kept", "  {% if true %}x{% endif %}"),
    ("ws/stmt/plus_is_noop", "  {%+ if true %}x{% endif %}"),
    ("ws/minus_vs_negative", "{{-1}}"),
    ("ws/minus_space_negative", "{{ -1 }}"),
    ("ws/strips_all_kinds", "a \t\n\r\n {{- 'b' -}} \n\t c"),
    ("ws/comment_strip_left", "x\n\n{#- c #}y"),
    ("ws/raw_strip", "a {%- raw -%}  {{ x }}  {%- endraw -%} b"),

    # ------------------------------------------------------------------ raw
    ("raw/basic", "{% raw %}{{ x }} {% if %}{% endraw %}"),
    ("raw/with_text_around", "a{% raw %}{# c #}{% endraw %}b"),
    ("raw/multiline", "{% raw %}\n{{ a }}\n{% endraw %}"),
    ("raw/minus_inside", "{% raw %}{{- x -}}{% endraw %}"),
    ("raw/keeps_whitespace", "{% raw %}  x  {% endraw %}"),

    # ------------------------------------------------------------- literals
    ("lit/str/single", "{{ 'abc' }}"),
    ("lit/str/double", '{{ "abc" }}'),
    ("lit/str/single_in_double", '{{ "it\'s" }}'),
    ("lit/str/double_in_single", "{{ 'say \"hi\"' }}"),
    ("lit/str/escaped_quote", r"{{ 'it\'s' }}"),
    ("lit/str/escape_newline", r"{{ 'a\nb' }}"),
    ("lit/str/escape_tab", r"{{ 'a\tb' }}"),
    ("lit/str/escape_backslash", r"{{ 'a\\b' }}"),
    ("lit/str/escape_hex", r"{{ '\x41\x42' }}"),
    ("lit/str/escape_unicode", r"{{ '\u00e9\u4f60' }}"),
    ("lit/str/unknown_escape_kept", r"{{ 'a\qb' }}"),
    ("lit/str/raw_unicode", "{{ 'é 你好' }}"),
    ("lit/str/empty", "{{ '' }}[{{ \"\" }}]"),
    ("lit/str/adjacent_concat", "{{ 'a' 'b' \"c\" }}"),
    ("lit/str/literal_newline", "{{ 'a\nb' }}"),
    ("lit/int/plain", "{{ 42 }}"),
    ("lit/int/zero", "{{ 0 }}"),
    ("lit/int/negative", "{{ -7 }}"),
    ("lit/int/underscore", "{{ 1_000_000 }}"),
    ("lit/int/hex", "{{ 0x1F }}"),
    ("lit/int/octal", "{{ 0o17 }}"),
    ("lit/int/binary", "{{ 0b101 }}"),
    ("lit/int/big", "{{ 12345678901234567890 }}"),
    ("lit/float/plain", "{{ 1.5 }}"),
    ("lit/float/whole", "{{ 2.0 }}"),
    ("lit/float/exponent", "{{ 1e3 }}"),
    ("lit/float/exponent_neg", "{{ 2.5e-3 }}"),
    ("lit/float/small", "{{ 0.0001 }}"),
    ("lit/float/tiny", "{{ 0.00001 }}"),
    ("lit/float/large", "{{ 1e16 }}"),
    ("lit/float/below_e16", "{{ 1e15 }}"),
    ("lit/float/many_digits", "{{ 3.14159265358979 }}"),
    ("lit/bool/lower", "{{ true }} {{ false }}"),
    ("lit/bool/upper", "{{ True }} {{ False }}"),
    ("lit/none/lower", "{{ none }}"),
    ("lit/none/upper", "{{ None }}"),
    ("lit/list/empty", "{{ [] }}"),
    ("lit/list/mixed", "{{ ['a', 1, none, 1.5, true] }}"),
    ("lit/list/trailing_comma", "{{ [1, 2,] }}"),
    ("lit/list/nested", "{{ [[1, 2], [], ['x']] }}"),
    ("lit/tuple/pair", "{{ (1, 'a') }}"),
    ("lit/tuple/single", "{{ (1,) }}"),
    ("lit/tuple/empty", "{{ () }}"),
    ("lit/tuple/parens_only", "{{ (1) }}"),
    ("lit/tuple/bare_in_set", "{% set t = 1, 2 %}{{ t }}"),
    ("lit/dict/empty", "{{ {} }}"),
    ("lit/dict/simple", "{{ {'a': 1, 'b': 'x'} }}"),
    ("lit/dict/nested", "{{ {'k': [1, 2], 'd': {'z': none}} }}"),
    ("lit/dict/order_kept", "{{ {'b': 1, 'a': 2} }}"),
    ("lit/dict/int_keys", "{{ {1: 'one', 2: 'two'}[2] }}"),
    ("lit/dict/dup_key_last_wins", "{{ {'a': 1, 'a': 2} }}"),

    # ------------------------------------------------------- access/slicing
    ("expr/access/dot", "{{ user.name }}", {"user": {"name": "ann"}}),
    ("expr/access/subscript", "{{ user['name'] }}", {"user": {"name": "ann"}}),
    ("expr/access/subscript_var", "{{ user[key] }}", {"user": {"name": "ann"}, "key": "name"}),
    ("expr/access/nested", "{{ a.b.c }} {{ a['b']['c'] }} {{ a.b['c'] }}", {"a": {"b": {"c": 7}}}),
    ("expr/access/list_index", "{{ xs[0] }} {{ xs[2] }}", {"xs": [10, 20, 30]}),
    ("expr/access/list_negative", "{{ xs[-1] }} {{ xs[-3] }}", {"xs": [10, 20, 30]}),
    ("expr/access/list_dot_index", "{{ xs.1 }}", {"xs": [10, 20, 30]}),
    ("expr/access/list_out_of_range", "[{{ xs[5] }}]", {"xs": [10, 20, 30]}),
    ("expr/access/missing_key", "[{{ user.age }}][{{ user['age'] }}]", {"user": {"name": "ann"}}),
    ("expr/access/list_of_dicts", "{{ users[1].name }}", {"users": USERS}),
    ("expr/access/key_with_space", "{{ d['a b'] }}", {"d": {"a b": 1}}),
    ("expr/access/key_digit_string", "{{ d['1'] }}", {"d": {"1": "one"}}),
    ("expr/access/string_index", "{{ s[0] }}{{ s[-1] }}", {"s": "hello"}),
    ("expr/access/int_subscript_undefined", "[{{ n[0] }}][{{ n.x }}]", {"n": 5}),
    ("expr/access/null_value", "[{{ d.v }}]", {"d": {"v": None}}),
    ("expr/access/key_named_items", "{{ d['items'] }}", {"d": {"items": [1]}}),
    ("expr/access/key_named_keys_dot", "{{ d.keys is defined }}", {"d": {"a": 1}}),
    ("expr/access/dot_prefers_method", "{{ d.items is callable }} {{ d['items'] is callable }}", {"d": {"items": [1]}}),
    ("expr/access/key_shadowing_method", "{{ d.count }}", {"d": {"count": 3}}),
    ("expr/slice/str_range", "{{ s[1:3] }}", {"s": "hello"}),
    ("expr/slice/str_from", "{{ s[2:] }}", {"s": "hello"}),
    ("expr/slice/str_to", "{{ s[:2] }}", {"s": "hello"}),
    ("expr/slice/str_reverse", "{{ s[::-1] }}", {"s": "hello"}),
    ("expr/slice/str_step", "{{ s[::2] }}", {"s": "abcdefg"}),
    ("expr/slice/str_negative", "{{ s[-3:-1] }}", {"s": "hello"}),
    ("expr/slice/str_unicode", "{{ s[1:3] }}", {"s": "héllo"}),
    ("expr/slice/list_range", "{{ xs[1:3] }}", {"xs": [1, 2, 3, 4]}),
    ("expr/slice/list_from", "{{ xs[2:] }}", {"xs": [1, 2, 3, 4]}),
    ("expr/slice/list_negative", "{{ xs[:-1] }}", {"xs": [1, 2, 3, 4]}),
    ("expr/slice/list_step", "{{ xs[1::2] }}", {"xs": [1, 2, 3, 4, 5]}),
    ("expr/slice/list_reverse_step", "{{ xs[::-2] }}", {"xs": [1, 2, 3, 4, 5]}),
    ("expr/slice/out_of_range", "{{ xs[5:10] }}", {"xs": [1, 2]}),
    ("expr/slice/all", "{{ xs[:] }}", {"xs": [1, 2]}),
    ("expr/slice/literal", "{{ 'abcdef'[1:4] }}"),
    ("expr/slice/step_zero", "{{ xs[::0] }}", {"xs": [1, 2]}),

    # ---------------------------------------------------------- arithmetic
    ("expr/arith/int_add", "{{ 1 + 2 }}"),
    ("expr/arith/int_sub", "{{ 1 - 5 }}"),
    ("expr/arith/int_mul", "{{ 6 * 7 }}"),
    ("expr/arith/int_div", "{{ 7 / 2 }}"),
    ("expr/arith/int_div_exact", "{{ 6 / 2 }}"),
    ("expr/arith/int_floordiv", "{{ 7 // 2 }}"),
    ("expr/arith/neg_floordiv", "{{ -7 // 2 }}"),
    ("expr/arith/mod", "{{ 7 % 3 }}"),
    ("expr/arith/neg_mod", "{{ -7 % 3 }}"),
    ("expr/arith/mod_neg_divisor", "{{ 7 % -3 }}"),
    ("expr/arith/pow", "{{ 2 ** 10 }}"),
    ("expr/arith/pow_negative_exp", "{{ 2 ** -1 }}"),
    ("expr/arith/pow_float", "{{ 2 ** 0.5 }}"),
    ("expr/arith/pow_left_assoc", "{{ 2 ** 3 ** 2 }}"),
    ("expr/arith/neg_pow", "{{ -2 ** 2 }}"),
    ("expr/arith/bigint", "{{ 2 ** 64 }}"),
    ("expr/arith/float_add", "{{ 0.1 + 0.2 }}"),
    ("expr/arith/float_int_add", "{{ 1 + 2.0 }}"),
    ("expr/arith/float_mul", "{{ 1.5 * 2 }}"),
    ("expr/arith/float_floordiv", "{{ 7.5 // 2 }}"),
    ("expr/arith/float_mod", "{{ 7.5 % 2 }}"),
    ("expr/arith/third", "{{ 10 / 3 }}"),
    ("expr/arith/half", "{{ 1 / 2 }}"),
    ("expr/arith/one_point_zero", "{{ 3 / 3 }}"),
    ("expr/arith/e20", "{{ 1e10 * 1e10 }}"),
    ("expr/arith/e_minus", "{{ 1 / 100000 }}"),
    ("expr/arith/large_float", "{{ 123456789.0 * 1000 }}"),
    ("expr/arith/inf", "{{ 1e308 * 10 }}"),
    ("expr/arith/neg_zero", "{{ -0.0 }}"),
    ("expr/arith/precedence", "{{ 1 + 2 * 3 - 4 / 2 }}"),
    ("expr/arith/parens", "{{ (1 + 2) * 3 }}"),
    ("expr/arith/unary_minus_var", "{{ -x }}", {"x": 3}),
    ("expr/arith/unary_plus", "{{ +x }}", {"x": -3}),
    ("expr/arith/double_neg", "{{ - -3 }}"),
    ("expr/arith/vars", "{{ a * b + c }}", {"a": 3, "b": 4.5, "c": 1}),
    ("expr/arith/json_float_whole", "{{ x }} {{ x * 2 }}", {"x": 2.0}),
    ("expr/arith/bool_plus_int", "{{ true + 1 }}"),
    ("expr/arith/str_concat_plus", "{{ 'ab' + 'cd' }}"),
    ("expr/arith/str_repeat", "{{ 'ab' * 3 }}"),
    ("expr/arith/list_concat", "{{ [1] + [2, 3] }}"),
    ("expr/arith/list_repeat", "{{ [0] * 3 }}"),
    ("expr/arith/str_percent_format", "{{ 'a%sb' % 1 }}"),
    ("expr/arith/str_percent_tuple", "{{ '%s=%d' % ('x', 4) }}"),
    ("expr/arith/div_by_zero", "{{ 1 / 0 }}"),
    ("expr/arith/floordiv_by_zero", "{{ 1 // 0 }}"),
    ("expr/arith/mod_by_zero", "{{ 1 % 0 }}"),
    ("expr/arith/str_plus_int", "{{ 'a' + 1 }}"),
    ("expr/arith/none_plus_int", "{{ none + 1 }}"),
    ("expr/arith/str_times_str", "{{ 'a' * 'b' }}"),

    # ----------------------------------------------------------- comparison
    ("expr/compare/lt", "{{ 1 < 2 }} {{ 2 < 1 }}"),
    ("expr/compare/le_ge", "{{ 2 <= 2 }} {{ 1 >= 2 }}"),
    ("expr/compare/eq_ne", "{{ 1 == 1 }} {{ 1 != 1 }}"),
    ("expr/compare/int_float_eq", "{{ 1 == 1.0 }}"),
    ("expr/compare/bool_int_eq", "{{ true == 1 }}"),
    ("expr/compare/str_eq", "{{ 'a' == 'a' }} {{ 'a' == 'A' }}"),
    ("expr/compare/str_lt", "{{ 'apple' < 'banana' }} {{ 'Z' < 'a' }}"),
    ("expr/compare/str_int_ne", "{{ '1' == 1 }}"),
    ("expr/compare/list_eq", "{{ [1, 2] == [1, 2] }} {{ [1, 2] == [2, 1] }}"),
    ("expr/compare/list_lt", "{{ [1, 2] < [1, 3] }}"),
    ("expr/compare/dict_eq", "{{ {'a': 1} == {'a': 1} }}"),
    ("expr/compare/none_eq", "{{ none == none }} {{ x == none }}", {"x": None}),
    ("expr/compare/chain_true", "{{ 1 < 2 < 3 }}"),
    ("expr/compare/chain_false", "{{ 1 < 3 < 2 }}"),
    ("expr/compare/chain_mixed", "{{ 1 < 2 > 1 }} {{ 1 == 1 != 2 }}"),
    ("expr/compare/vars", "{{ age >= 18 }}", {"age": 20}),
    ("expr/compare/str_lt_int", "{{ 'a' < 1 }}"),
    ("expr/compare/none_lt_int", "{{ none < 1 }}"),
    ("expr/in/str", "{{ 'ell' in 'hello' }} {{ 'x' in 'hello' }}"),
    ("expr/in/list", "{{ 2 in [1, 2] }} {{ 3 in [1, 2] }}"),
    ("expr/in/dict_keys", "{{ 'a' in d }} {{ 1 in d }}", {"d": {"a": 1}}),
    ("expr/in/not_in", "{{ 'x' not in 'abc' }} {{ 'a' not in ['a'] }}"),
    ("expr/in/not_prefix", "{{ not 'a' in 'abc' }}"),
    ("expr/in/int_float", "{{ 1.0 in [1, 2] }}"),
    ("expr/in/empty_str", "{{ '' in 'abc' }}"),
    ("expr/in/int_in_str", "{{ 1 in 'abc' }}"),

    # -------------------------------------------------------------- logic
    ("expr/logic/and_returns_operand", "{{ 1 and 2 }} {{ 0 and 2 }}"),
    ("expr/logic/or_returns_operand", "{{ 0 or 'x' }} {{ 'a' or 'b' }}"),
    ("expr/logic/or_falsy_chain", "{{ '' or none or 0 }}"),
    ("expr/logic/and_list", "{{ [] and 1 }} {{ [1] and 'y' }}"),
    ("expr/logic/not", "{{ not 0 }} {{ not 'a' }} {{ not [] }} {{ not {} }}"),
    ("expr/logic/not_not", "{{ not not 'x' }}"),
    ("expr/logic/precedence", "{{ true or false and false }}"),
    ("expr/logic/not_binds_tighter_than_and", "{{ not false and false }}"),
    ("expr/logic/undefined_or", "{{ missing or 'fallback' }}"),
    ("expr/logic/undefined_and", "[{{ missing and 'x' }}]"),
    ("expr/logic/string_zero_truthy", "{{ '0' or 'x' }} {{ 0.0 or 'y' }}"),
    ("expr/logic/short_circuit", "{{ true or (1 / 0) }}"),
    ("expr/cond/with_else", "{{ 'yes' if flag else 'no' }}", {"flag": True}),
    ("expr/cond/else_branch", "{{ 'yes' if flag else 'no' }}", {"flag": False}),
    ("expr/cond/without_else_true", "{{ 'yes' if flag }}", {"flag": True}),
    ("expr/cond/without_else_false", "[{{ 'yes' if flag }}]", {"flag": False}),
    ("expr/cond/without_else_is_undefined", "{{ ('yes' if false) is undefined }}"),
    ("expr/cond/without_else_default", "{{ ('yes' if false)|default('dflt') }}"),
    ("expr/cond/nested", "{{ 'a' if x == 1 else 'b' if x == 2 else 'c' }}", {"x": 2}),
    ("expr/cond/in_concat", "{{ 'n=' ~ (n if n else 'none') }}", {"n": 0}),
    ("expr/cond/filter_binding", "{{ 'a' if true else 'b'|upper }}"),
    ("expr/concat/str_int", "{{ 'a' ~ 1 }}"),
    ("expr/concat/ints", "{{ 1 ~ 2 }}"),
    ("expr/concat/float", "{{ 'v' ~ 1.5 ~ '/' ~ 2.0 }}"),
    ("expr/concat/none", "{{ 'a' ~ none }}"),
    ("expr/concat/bool", "{{ 'a' ~ true }}"),
    ("expr/concat/undefined", "[{{ 'a' ~ missing ~ 'b' }}]"),
    ("expr/concat/list", "{{ [1, 'x'] ~ '!' }}"),
    ("expr/concat/dict", "{{ 'd=' ~ {'a': 1} }}"),
    ("expr/concat/precedence_plus", "{{ 1 + 2 ~ 3 }}"),
    ("expr/concat/filter_binding", "{{ 'a' ~ 'b'|upper }}"),
    ("expr/prec/test_binds_tighter_than_plus", "{{ 1 + 1 is even }}"),
    ("expr/prec/filter_on_negation", "{{ -1|abs }}"),
    ("expr/prec/filter_on_literal_in_sum", "{{ 1 + -2|abs }}"),
    ("expr/prec/not_is", "{{ not x is defined }}"),
    ("expr/prec/filter_after_paren", "{{ (1 - 3)|abs }}"),

    # ------------------------------------------------------ output formatting
    ("out/bool", "{{ t }} {{ f }}", {"t": True, "f": False}),
    ("out/none", "{{ n }}", {"n": None}),
    ("out/int_float_from_json", "{{ i }} {{ f }} {{ g }}", {"i": 3, "f": 3.0, "g": 0.1}),
    ("out/float_exponent_from_json", "{{ a }} {{ b }}", {"a": 1e20, "b": 1.5e-7}),
    ("out/list_mixed", "{{ xs }}", {"xs": ["a", 1, None, 1.5]}),
    ("out/list_bools", "{{ [true, false] }}"),
    ("out/list_empty", "{{ xs }}", {"xs": []}),
    ("out/dict_nested", "{{ d }}", {"d": {"k": [1, 2]}}),
    ("out/dict_values", "{{ d }}", {"d": {"a": None, "b": True, "c": "s", "d": 2.5}}),
    ("out/dict_empty", "{{ d }}", {"d": {}}),
    ("out/list_of_dicts", "{{ xs }}", {"xs": [{"a": 1}, {"b": [None]}]}),
    ("out/repr/apostrophe", "{{ xs }}", {"xs": ["it's"]}),
    ("out/repr/double_quote", "{{ xs }}", {"xs": ['say "hi"']}),
    ("out/repr/both_quotes", "{{ xs }}", {"xs": ["it's \"x\""]}),
    ("out/repr/newline_tab", "{{ xs }}", {"xs": ["a\nb\tc"]}),
    ("out/repr/backslash", "{{ xs }}", {"xs": ["a\\b"]}),
    ("out/repr/control_char", "{{ xs }}", {"xs": ["\u0001\u007f"]}),
    ("out/repr/unicode", "{{ xs }}", {"xs": ["é", "你好", "🎉"]}),
    ("out/repr/nbsp_and_zwsp", "{{ xs }}", {"xs": ["a\u00a0b\u200bc"]}),
    ("out/repr/dict_key_quotes", "{{ d }}", {"d": {"it's": "v"}}),
    ("out/repr/floats_in_list", "{{ xs }}", {"xs": [1.0, 0.5, 1e20, 1e-5, 100.0]}),
    ("out/unicode_text", "{{ s }}", {"s": "Grüße, 世界 👋"}),
    ("out/string_with_braces", "{{ s }}", {"s": "{{ not rendered }}"}),
    ("out/html_not_escaped", "{{ s }}", {"s": "<b>&amp;</b>"}),
    ("out/range", "{{ range(3) }}"),
    ("out/big_int_from_json", "{{ n }} {{ n + 1 }}", {"n": 12345678901234567890}),
    ("out/int64_edge_from_json", "{{ n + 1 }}", {"n": 9223372036854775807}),
    ("out/float_mul_whole", "{{ 2.5 * 2 }} {{ 10 / 4 * 2 }} {{ -7.5 // 2 }}"),
    ("out/undefined_in_list", "{{ [missing, 1] }}"),

    # ------------------------------------------------------------ undefined
    ("undef/print_empty", "[{{ missing }}]"),
    ("undef/attr_of_defined", "[{{ d.nope }}]", {"d": {}}),
    ("undef/if_false", "{% if missing %}yes{% else %}no{% endif %}"),
    ("undef/if_attr", "{% if d.nope %}yes{% else %}no{% endif %}", {"d": {}}),
    ("undef/not", "{{ not missing }}"),
    ("undef/default", "{{ missing|default('x') }}"),
    ("undef/length", "{{ missing|length }}"),
    ("undef/upper", "[{{ missing|upper }}]"),
    ("undef/int", "{{ missing|int }}"),
    ("undef/list", "{{ missing|list }}"),
    ("undef/join", "[{{ missing|join(',') }}]"),
    ("undef/for_empty", "{% for x in missing %}{{ x }}{% else %}empty{% endfor %}"),
    ("undef/eq_none", "{{ missing == none }}"),
    ("undef/ne_value", "{{ missing != 'a' }}"),
    ("undef/in_list", "{{ missing in [] }}"),
    ("undef/string_filter", "[{{ missing|string }}]"),
    ("undef/concat", "[{{ missing ~ missing }}]"),
    ("undef/attr_of_undefined", "{{ missing.attr }}"),
    ("undef/item_of_undefined", "{{ missing['k'] }}"),
    ("undef/deep_attr", "{{ d.a.b }}", {"d": {}}),
    ("undef/call", "{{ missing() }}"),
    ("undef/method_on_undefined", "{{ missing.upper() }}"),
    ("undef/add", "{{ missing + 1 }}"),
    ("undef/mul", "{{ missing * 2 }}"),
    ("undef/neg", "{{ -missing }}"),
    ("undef/lt", "{{ missing < 1 }}"),
    ("undef/tojson", "{{ missing|tojson }}"),
    ("undef/iterate_attr", "{% for x in missing.items %}{% endfor %}"),
    ("undef/abs", "{{ missing|abs }}"),
    ("undef/defined_then_attr", "{% if missing is defined %}{{ missing.x }}{% else %}safe{% endif %}"),
    ("undef/none_attr", "[{{ n.x }}]", {"n": None}),
    ("undef/none_item", "[{{ n['x'] }}]", {"n": None}),

    # ---------------------------------------------------------------- tests
    ("test/defined/true", "{{ x is defined }}", {"x": 0}),
    ("test/defined/false", "{{ x is defined }}"),
    ("test/defined/none_is_defined", "{{ x is defined }}", {"x": None}),
    ("test/defined/attr", "{{ d.a is defined }} {{ d.b is defined }}", {"d": {"a": 1}}),
    ("test/defined/not", "{{ x is not defined }}"),
    ("test/undefined/basic", "{{ x is undefined }} {{ y is undefined }}", {"y": 1}),
    ("test/none/basic", "{{ x is none }} {{ 0 is none }} {{ missing is none }}", {"x": None}),
    ("test/none/not", "{{ x is not none }}", {"x": ""}),
    ("test/number/basic", "{{ 1 is number }} {{ 1.5 is number }} {{ '1' is number }}"),
    ("test/number/bool", "{{ true is number }}"),
    ("test/number/none", "{{ none is number }}"),
    ("test/string/basic", "{{ 'a' is string }} {{ 1 is string }} {{ none is string }}"),
    ("test/mapping/basic", "{{ {} is mapping }} {{ [] is mapping }} {{ d is mapping }}", {"d": {"a": 1}}),
    ("test/iterable/basic", "{{ [] is iterable }} {{ 'abc' is iterable }} {{ {} is iterable }} {{ 1 is iterable }}"),
    ("test/iterable/undefined", "{{ missing is iterable }}"),
    ("test/sequence/basic", "{{ [] is sequence }} {{ 'a' is sequence }} {{ {} is sequence }} {{ 1 is sequence }}"),
    ("test/even/basic", "{{ 2 is even }} {{ 3 is even }} {{ 0 is even }} {{ -2 is even }}"),
    ("test/odd/basic", "{{ 3 is odd }} {{ 2 is odd }} {{ -3 is odd }}"),
    ("test/odd/float", "{{ 3.0 is odd }}"),
    ("test/divisibleby/parens", "{{ 9 is divisibleby(3) }} {{ 10 is divisibleby(3) }}"),
    ("test/divisibleby/no_parens", "{{ 9 is divisibleby 3 }}"),
    ("test/divisibleby/zero", "{{ 9 is divisibleby 0 }}"),
    ("test/sameas/none", "{{ x is sameas none }}", {"x": None}),
    ("test/sameas/bools", "{{ true is sameas true }} {{ 1 is sameas true }}"),
    ("test/sameas/false_vs_zero", "{{ 0 is sameas false }}"),
    ("test/sameas/same_var", "{{ a is sameas a }}", {"a": [1]}),
    ("test/in/list", "{{ 2 is in [1, 2] }} {{ 3 is in [1, 2] }}"),
    ("test/in/string", "{{ 'b' is in 'abc' }}"),
    ("test/in/dict", "{{ 'k' is in d }}", {"d": {"k": 1}}),
    ("test/true/basic", "{{ true is true }} {{ 1 is true }} {{ 'x' is true }}"),
    ("test/false/basic", "{{ false is false }} {{ 0 is false }} {{ none is false }}"),
    ("test/boolean/basic", "{{ true is boolean }} {{ 1 is boolean }}"),
    ("test/integer/basic", "{{ 1 is integer }} {{ 1.0 is integer }} {{ true is integer }}"),
    ("test/float/basic", "{{ 1.0 is float }} {{ 1 is float }}"),
    ("test/lower/basic", "{{ 'abc' is lower }} {{ 'aBc' is lower }} {{ 'a1!' is lower }} {{ '' is lower }}"),
    ("test/upper/basic", "{{ 'ABC' is upper }} {{ 'AB1' is upper }} {{ 'Ab' is upper }} {{ '1' is upper }}"),
    ("test/eq/aliases", "{{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 2 is ne 2 }}"),
    ("test/eq/operator_name_not_parsed", "{{ 2 is == 2 }}"),
    ("test/compare/aliases", "{{ 3 is gt 2 }} {{ 3 is ge 3 }} {{ 3 is lt 2 }} {{ 3 is le 3 }} {{ 3 is greaterthan 1 }} {{ 3 is lessthan 1 }}"),
    ("test/callable/basic", "{{ range is callable }} {{ 'a' is callable }}"),
    ("test/filter/basic", "{{ 'upper' is filter }} {{ 'split' is filter }}"),
    ("test/test/basic", "{{ 'odd' is test }} {{ 'nope' is test }}"),
    ("test/escaped/basic", "{{ 'a' is escaped }} {{ ('<'|escape) is escaped }}"),
    ("test/in_if", "{% if n is even %}even{% else %}odd{% endif %}", {"n": 4}),
    ("test/not_in_if", "{% if x is not none %}set{% else %}unset{% endif %}", {"x": None}),
    ("test/unknown", "{{ 1 is nope }}"),

    # ---------------------------------------------------------- stmt/if
    ("stmt/if/true", "{% if x %}yes{% endif %}", {"x": 1}),
    ("stmt/if/false", "[{% if x %}yes{% endif %}]", {"x": 0}),
    ("stmt/if/else", "{% if x > 5 %}big{% else %}small{% endif %}", {"x": 3}),
    ("stmt/if/elif", "{% if x == 1 %}one{% elif x == 2 %}two{% elif x == 3 %}three{% else %}many{% endif %}", {"x": 3}),
    ("stmt/if/elif_else", "{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %}", {"x": 9}),
    ("stmt/if/nested", "{% if a %}A{% if b %}B{% else %}b{% endif %}{% endif %}", {"a": True, "b": False}),
    ("stmt/if/truthiness", "{% for v in [0, 1, '', 'x', [], [0], {}, none, 0.0, '0', false] %}{% if v %}T{% else %}F{% endif %}{% endfor %}"),
    ("stmt/if/and_or", "{% if a and (b or c) %}ok{% else %}no{% endif %}", {"a": 1, "b": 0, "c": "x"}),
    ("stmt/if/empty_dict_ctx", "{% if d %}full{% else %}empty{% endif %}", {"d": {}}),
    ("stmt/if/set_inside_visible_after", "{% if true %}{% set x = 5 %}{% endif %}{{ x }}"),
    ("stmt/if/multiline", "{% if ok %}\nline1\n{% else %}\nline2\n{% endif %}\n", {"ok": True}),
    ("stmt/if/compare_strings", "{% if s == 'go' %}going{% endif %}", {"s": "go"}),
    ("stmt/if/len", "{% if xs|length > 1 %}many{% endif %}", {"xs": [1, 2]}),

    # --------------------------------------------------------- stmt/for
    ("stmt/for/basic", "{% for x in xs %}{{ x }},{% endfor %}", {"xs": [1, 2, 3]}),
    ("stmt/for/else_empty", "{% for x in xs %}{{ x }}{% else %}none{% endfor %}", {"xs": []}),
    ("stmt/for/else_not_taken", "{% for x in xs %}{{ x }}{% else %}none{% endfor %}", {"xs": [1]}),
    ("stmt/for/loop_index", "{% for x in 'abc' %}{{ loop.index }}{% endfor %}"),
    ("stmt/for/loop_index0", "{% for x in 'abc' %}{{ loop.index0 }}{% endfor %}"),
    ("stmt/for/loop_revindex", "{% for x in 'abc' %}{{ loop.revindex }}{% endfor %}"),
    ("stmt/for/loop_revindex0", "{% for x in 'abc' %}{{ loop.revindex0 }}{% endfor %}"),
    ("stmt/for/loop_first", "{% for x in 'abc' %}{{ loop.first }} {% endfor %}"),
    ("stmt/for/loop_last", "{% for x in xs %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}", {"xs": ["a", "b", "c"]}),
    ("stmt/for/loop_length", "{% for x in xs %}{{ loop.length }}{% endfor %}", {"xs": [1, 2]}),
    ("stmt/for/loop_cycle", "{% for x in range(5) %}{{ loop.cycle('odd', 'even') }} {% endfor %}"),
    ("stmt/for/loop_previtem", "{% for x in [1, 2, 3] %}[{{ loop.previtem }}]{% endfor %}"),
    ("stmt/for/loop_nextitem", "{% for x in [1, 2, 3] %}[{{ loop.nextitem }}]{% endfor %}"),
    ("stmt/for/loop_previtem_defined", "{% for x in [1, 2] %}{{ loop.previtem is defined }} {% endfor %}"),
    ("stmt/for/loop_changed", "{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}"),
    ("stmt/for/loop_depth", "{% for x in [1] %}{{ loop.depth }}{{ loop.depth0 }}{% endfor %}"),
    ("stmt/for/if_filter", "{% for x in range(10) if x is odd %}{{ x }}{% endfor %}"),
    ("stmt/for/if_filter_loop_vars", "{% for x in range(10) if x > 6 %}{{ loop.index }}/{{ loop.length }}{{ ' ' if not loop.last }}{% endfor %}"),
    ("stmt/for/if_filter_else", "{% for x in [1, 3] if x is even %}{{ x }}{% else %}no evens{% endfor %}"),
    ("stmt/for/nested_outer_index", "{% for a in 'ab' %}{% set outer = loop.index %}{% for b in 'xy' %}{{ outer }}.{{ loop.index }} {% endfor %}{% endfor %}"),
    ("stmt/for/nested_loop_shadows", "{% for a in [1, 2] %}{% for b in [1, 2, 3] %}{% endfor %}{{ loop.length }}{% endfor %}"),
    ("stmt/for/nested_grid", "{% for row in rows %}{% for c in row %}{{ c }}{% if not loop.last %}|{% endif %}{% endfor %};{% endfor %}", {"rows": [[1, 2], [3, 4]]}),
    ("stmt/for/unpack_items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("stmt/for/unpack_pairs", "{% for a, b in pairs %}{{ a }}-{{ b }} {% endfor %}", {"pairs": [[1, "x"], [2, "y"]]}),
    ("stmt/for/unpack_parens", "{% for (a, b) in [(1, 2), (3, 4)] %}{{ a + b }} {% endfor %}"),
    ("stmt/for/unpack_mismatch", "{% for a, b in [[1, 2, 3]] %}{{ a }}{% endfor %}"),
    ("stmt/for/unpack_int", "{% for a, b in [1, 2] %}{{ a }}{% endfor %}"),
    ("stmt/for/dict_keys", "{% for k in d %}{{ k }} {% endfor %}", {"d": {"z": 1, "a": 2, "m": 3}}),
    ("stmt/for/dict_values", "{% for v in d.values() %}{{ v }} {% endfor %}", {"d": {"z": 1, "a": 2}}),
    ("stmt/for/dict_literal_order", "{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}"),
    ("stmt/for/string", "{% for ch in 'héllo' %}[{{ ch }}]{% endfor %}"),
    ("stmt/for/range_stop", "{% for i in range(3) %}{{ i }}{% endfor %}"),
    ("stmt/for/range_start_stop_step", "{% for i in range(1, 10, 3) %}{{ i }} {% endfor %}"),
    ("stmt/for/range_negative_step", "{% for i in range(3, 0, -1) %}{{ i }}{% endfor %}"),
    ("stmt/for/range_empty", "{% for i in range(0) %}{{ i }}{% else %}empty{% endfor %}"),
    ("stmt/for/var_not_leaking", "{% for x in [1, 2] %}{% endfor %}[{{ x }}]"),
    ("stmt/for/outer_var_restored", "{% set x = 'out' %}{% for x in [1, 2] %}{{ x }}{% endfor %}{{ x }}"),
    ("stmt/for/set_in_loop_not_leaking", "{% set total = 0 %}{% for x in [1, 2, 3] %}{% set total = total + x %}{% endfor %}{{ total }}"),
    ("stmt/for/set_in_loop_visible_in_iteration", "{% for x in [1, 2] %}{% set y = x * 10 %}{{ y }} {% endfor %}"),
    ("stmt/for/namespace_accumulate", "{% set ns = namespace(total=0) %}{% for x in [1, 2, 3] %}{% set ns.total = ns.total + x %}{% endfor %}{{ ns.total }}"),
    ("stmt/for/recursive", "{% for n in tree recursive %}{{ n.name }}{% if n.children %}({{ loop(n.children) }}){% endif %}{% endfor %}",
     {"tree": [{"name": "a", "children": [{"name": "b", "children": []}, {"name": "c"}]}, {"name": "d"}]}),
    ("stmt/for/recursive_depth", "{% for n in tree recursive %}{{ loop.depth }}{{ n.name }} {% if n.kids %}{{ loop(n.kids) }}{% endif %}{% endfor %}",
     {"tree": [{"name": "a", "kids": [{"name": "b", "kids": [{"name": "c"}]}]}]}),
    ("stmt/for/over_none", "{% for x in n %}{{ x }}{% endfor %}", {"n": None}),
    ("stmt/for/over_int", "{% for x in 5 %}{{ x }}{% endfor %}"),
    ("stmt/for/loop_in_else_undefined", "{% for x in [] %}{% else %}[{{ loop.index }}]{% endfor %}"),
    ("stmt/for/loop_after_loop", "{% for x in [1] %}{% endfor %}[{{ loop }}]"),
    ("stmt/for/list_of_dicts", "{% for u in users %}{{ u.name }}({{ u.age }}) {% endfor %}", {"users": USERS}),
    ("stmt/for/break_unsupported", "{% for x in [1, 2] %}{% break %}{% endfor %}"),
    ("stmt/for/continue_unsupported", "{% for x in [1, 2] %}{% continue %}{% endfor %}"),

    # --------------------------------------------------------- stmt/set
    ("stmt/set/basic", "{% set x = 42 %}{{ x }}"),
    ("stmt/set/expr", "{% set x = a * 2 ~ '!' %}{{ x }}", {"a": 5}),
    ("stmt/set/overrides_context", "{% set name = 'local' %}{{ name }}", {"name": "ctx"}),
    ("stmt/set/multi_target", "{% set a, b = 1, 2 %}{{ a }}{{ b }}"),
    ("stmt/set/unpack_list", "{% set a, b = xs %}{{ b }}{{ a }}", {"xs": ["x", "y"]}),
    ("stmt/set/block", "{% set body %}Hello {{ name }}!{% endset %}[{{ body }}]", {"name": "Ann"}),
    ("stmt/set/block_multiline", "{% set body %}\nline\n{% endset %}[{{ body }}]"),
    ("stmt/set/block_filter", "{% set body | upper %}shout {{ 1 }}{% endset %}{{ body }}"),
    ("stmt/set/block_filter_chain", "{% set body | trim | title %}  hello world  {% endset %}[{{ body }}]"),
    ("stmt/set/block_is_string", "{% set n %}5{% endset %}{{ n ~ 1 }} {{ n is string }}"),
    ("stmt/set/list_then_index", "{% set xs = [1, 2, 3] %}{{ xs[1] }}"),
    ("stmt/set/dict_literal", "{% set d = {'a': 1} %}{{ d.a }}"),
    ("stmt/set/namespace_attr", "{% set ns = namespace(a=1, b='x') %}{% set ns.a = 2 %}{{ ns.a }}{{ ns.b }}"),
    ("stmt/set/attr_on_dict_fails", "{% set d = {} %}{% set d.x = 1 %}"),
    ("stmt/set/list_append", "{% set xs = [1] %}{% set _ = xs.append(2) %}{{ xs }}"),
    ("stmt/set/dict_update", "{% set d = {'a': 1} %}{% set _ = d.update({'b': 2}) %}{{ d }}"),
    ("stmt/set/print_append_returns_none", "{% set xs = [] %}{{ xs.append(1) }}{{ xs }}"),
    ("stmt/set/whitespace", "a\n{% set x = 1 %}\nb"),
    ("stmt/set/whitespace_minus", "a\n{%- set x = 1 -%}\nb"),

    # ------------------------------------------------------ stmt/macro
    ("stmt/macro/basic", "{% macro hi(name) %}Hi {{ name }}!{% endmacro %}{{ hi('Ann') }}"),
    ("stmt/macro/defaults", "{% macro tag(name, cls='x') %}<{{ name }} class=\"{{ cls }}\">{% endmacro %}{{ tag('p') }}{{ tag('b', 'y') }}"),
    ("stmt/macro/kwargs_call", "{% macro f(a, b=2, c=3) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ f(1, c=9) }}"),
    ("stmt/macro/missing_arg_undefined", "{% macro f(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ f(1) }}"),
    ("stmt/macro/varargs", "{% macro f() %}{{ varargs }}{% endmacro %}{{ f(1, 2) }}"),
    ("stmt/macro/kwargs_var", "{% macro f() %}{{ kwargs }}{% endmacro %}{{ f(a=1) }}"),
    ("stmt/macro/too_many_args", "{% macro f(a) %}{{ a }}{% endmacro %}{{ f(1, 2) }}"),
    ("stmt/macro/unknown_kwarg", "{% macro f(a) %}{{ a }}{% endmacro %}{{ f(b=1) }}"),
    ("stmt/macro/reads_context", "{% macro f() %}{{ who }}{% endmacro %}{{ f() }}", {"who": "ctx"}),
    ("stmt/macro/loop_call", "{% macro li(x) %}<li>{{ x }}</li>{% endmacro %}{% for x in xs %}{{ li(x) }}{% endfor %}", {"xs": [1, 2]}),
    ("stmt/macro/whitespace", "{% macro f(x) %}\n  [{{ x }}]\n{% endmacro %}{{ f(1) }}|"),
    ("stmt/macro/recursive", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}"),
    ("stmt/macro/filter_result", "{% macro f() %}  hi  {% endmacro %}[{{ f()|trim|upper }}]"),
    ("stmt/macro/returns_string", "{% macro f() %}3{% endmacro %}{{ f() ~ 1 }}"),
    ("stmt/macro/call_before_define", "{{ f() }}{% macro f() %}x{% endmacro %}"),
    ("stmt/call/caller", "{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}inside{% endcall %}"),
    ("stmt/call/caller_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) each([1, 2]) %}<{{ item }}>{% endcall %}"),
    ("stmt/call/caller_twice", "{% macro twice() %}{{ caller() }}{{ caller() }}{% endmacro %}{% call twice() %}ab{% endcall %}"),
    ("stmt/call/sees_context", "{% macro wrap() %}({{ caller() }}){% endmacro %}{% call wrap() %}{{ v }}{% endcall %}", {"v": 7}),
    ("stmt/filter/upper", "{% filter upper %}hello {{ name }}{% endfilter %}", {"name": "ann"}),
    ("stmt/filter/chain", "{% filter trim|title %}   hello world   {% endfilter %}"),
    ("stmt/filter/with_args", "{% filter replace('a', 'o') %}banana{% endfilter %}"),
    ("stmt/filter/truncate", "{% filter truncate(10) %}one two three four{% endfilter %}"),
    ("stmt/with/basic", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}"),
    ("stmt/with/scoped", "{% with a = 1 %}{% endwith %}[{{ a }}]"),
    ("stmt/with/shadows", "{% with x = 'inner' %}{{ x }}{% endwith %} {{ x }}", {"x": "outer"}),
    ("stmt/with/set_inside", "{% with %}{% set y = 1 %}{{ y }}{% endwith %}[{{ y }}]"),
    ("stmt/with/refers_outer", "{% with a = x * 2 %}{{ a }}{% endwith %}", {"x": 4}),
    ("stmt/autoescape/on", "{% autoescape true %}{{ s }}{% endautoescape %} {{ s }}", {"s": "<b>"}),
    ("stmt/autoescape/safe", "{% autoescape true %}{{ s|safe }}{% endautoescape %}", {"s": "<b>"}),
    ("stmt/do_unsupported", "{% do xs.append(1) %}"),
    ("stmt/include_no_loader", "{% include 'x.html' %}"),

    # ----------------------------------------------------------- globals
    ("global/range_list", "{{ range(2, 5)|list }}"),
    ("global/dict", "{{ dict(a=1, b='x') }}"),
    ("global/namespace_print_attr", "{% set ns = namespace(x=1) %}{{ ns.x }}"),
    ("global/cycler", "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}"),
    ("global/joiner", "{% set j = joiner(', ') %}{% for x in [1, 2, 3] %}{{ j() }}{{ x }}{% endfor %}"),

    # ---------------------------------------------------------- filters
    ("filter/abs/int", "{{ -3|abs }} {{ x|abs }}", {"x": -4}),
    ("filter/abs/float", "{{ x|abs }}", {"x": -2.5}),
    ("filter/abs/string", "{{ 'x'|abs }}"),
    ("filter/attr/dict_key_not_attr", "[{{ d|attr('a') }}]", {"d": {"a": 1}}),
    ("filter/attr/undefined", "[{{ d|attr('nope') }}]", {"d": {}}),
    ("filter/capitalize/basic", "{{ 'hELLO wORLD'|capitalize }}"),
    ("filter/capitalize/empty", "[{{ ''|capitalize }}]"),
    ("filter/capitalize/leading_space", "{{ ' abc'|capitalize }}"),
    ("filter/center/even", "[{{ 'ab'|center(6) }}]"),
    ("filter/center/odd", "[{{ 'ab'|center(5) }}] [{{ 'abc'|center(6) }}]"),
    ("filter/center/default_width", "[{{ 'x'|center }}]"),
    ("filter/center/narrow", "[{{ 'abcdef'|center(2) }}]"),
    ("filter/default/undefined", "{{ missing|default('dflt') }}"),
    ("filter/default/defined_empty", "[{{ ''|default('dflt') }}]"),
    ("filter/default/boolean_true", "{{ ''|default('dflt', true) }} {{ 0|default(5, true) }}"),
    ("filter/default/boolean_kw", "{{ []|default('empty', boolean=true) }}"),
    ("filter/default/none_is_defined", "{{ n|default('dflt') }}", {"n": None}),
    ("filter/default/false_kept", "{{ false|default('x') }}"),
    ("filter/default/alias_d", "{{ missing|d('d') }}"),
    ("filter/default/no_arg", "[{{ missing|default }}]"),
    ("filter/default/attr_chain", "{{ user.nick|default(user.name) }}", {"user": {"name": "ann"}}),
    ("filter/dictsort/key", "{% for k, v in d|dictsort %}{{ k }}={{ v }} {% endfor %}", {"d": {"b": 1, "a": 3, "c": 2}}),
    ("filter/dictsort/value", "{% for k, v in d|dictsort(by='value') %}{{ k }}={{ v }} {% endfor %}", {"d": {"b": 1, "a": 3, "c": 2}}),
    ("filter/dictsort/reverse", "{% for k, v in d|dictsort(reverse=true) %}{{ k }} {% endfor %}", {"d": {"b": 1, "a": 3, "c": 2}}),
    ("filter/dictsort/case_insensitive", "{% for k, v in d|dictsort %}{{ k }} {% endfor %}", {"d": {"b": 1, "A": 2, "C": 3}}),
    ("filter/dictsort/case_sensitive", "{% for k, v in d|dictsort(true) %}{{ k }} {% endfor %}", {"d": {"b": 1, "A": 2, "C": 3}}),
    ("filter/dictsort/print", "{{ d|dictsort }}", {"d": {"b": 1, "a": 2}}),
    ("filter/escape/html", "{{ s|escape }}", {"s": "<a href=\"x\">Tom & 'Jerry'</a>"}),
    ("filter/escape/alias_e", "{{ '<>'|e }}"),
    ("filter/escape/number", "{{ 5|e }} {{ none|e }}"),
    ("filter/escape/double", "{{ '&amp;'|e }}"),
    ("filter/first/list", "{{ [3, 2, 1]|first }}"),
    ("filter/first/string", "{{ 'abc'|first }}"),
    ("filter/first/empty", "[{{ []|first }}]"),
    ("filter/first/dict", "{{ d|first }}", {"d": {"k": 1, "j": 2}}),
    ("filter/last/list", "{{ [3, 2, 1]|last }}"),
    ("filter/last/string", "{{ 'abc'|last }}"),
    ("filter/last/empty", "[{{ []|last }}]"),
    ("filter/float/string", "{{ '1.5'|float }} {{ '3'|float }}"),
    ("filter/float/int", "{{ 3|float }}"),
    ("filter/float/invalid", "{{ 'abc'|float }} {{ 'abc'|float(1.5) }}"),
    ("filter/float/exponent_string", "{{ '1e3'|float }}"),
    ("filter/float/spaces", "{{ ' 2.5 '|float }}"),
    ("filter/float/none", "{{ none|float }}"),
    ("filter/float/nan_string", "{{ 'nan'|float }} {{ '-inf'|float }}"),
    ("filter/int/string", "{{ '42'|int }} {{ '-7'|int }}"),
    ("filter/int/float_string", "{{ '4.7'|int }}"),
    ("filter/int/float", "{{ 4.9|int }} {{ -4.9|int }}"),
    ("filter/int/invalid", "{{ 'abc'|int }} {{ ''|int }}"),
    ("filter/int/invalid_default", "{{ 'abc'|int(7) }}"),
    ("filter/int/base16", "{{ 'ff'|int(base=16) }} {{ '0x1A'|int(0, 16) }}"),
    ("filter/int/base2", "{{ '101'|int(0, 2) }}"),
    ("filter/int/prefix_base10", "{{ '0x1A'|int }}"),
    ("filter/int/underscore", "{{ '1_000'|int }}"),
    ("filter/int/spaces", "{{ ' 42 '|int }}"),
    ("filter/int/bool_none", "{{ true|int }} {{ none|int }}"),
    ("filter/int/exponent_string", "{{ '1e3'|int }}"),
    ("filter/join/default", "{{ [1, 2, 3]|join }}"),
    ("filter/join/sep", "{{ ['a', 'b', 'c']|join(', ') }}"),
    ("filter/join/mixed", "{{ [1, none, 1.5, true, 'x']|join('|') }}"),
    ("filter/join/attribute", "{{ users|join(', ', attribute='name') }}", {"users": USERS}),
    ("filter/join/string", "{{ 'abc'|join('-') }}"),
    ("filter/join/dict", "{{ d|join(',') }}", {"d": {"x": 1, "y": 2}}),
    ("filter/join/nested_list", "{{ [[1, 2], ['a']]|join(';') }}"),
    ("filter/join/empty", "[{{ []|join(',') }}]"),
    ("filter/length/list", "{{ [1, 2, 3]|length }}"),
    ("filter/length/string_unicode", "{{ 'héllo 🎉'|length }}"),
    ("filter/length/dict", "{{ d|length }}", {"d": {"a": 1, "b": 2}}),
    ("filter/length/count_alias", "{{ 'abc'|count }}"),
    ("filter/length/int", "{{ 5|length }}"),
    ("filter/length/none", "{{ n|length }}", {"n": None}),
    ("filter/list/string", "{{ 'abc'|list }}"),
    ("filter/list/dict", "{{ d|list }}", {"d": {"a": 1, "b": 2}}),
    ("filter/list/list", "{{ [1, 2]|list }}"),
    ("filter/list/int", "{{ 1|list }}"),
    ("filter/lower/basic", "{{ 'HeLLo'|lower }}"),
    ("filter/lower/unicode", "{{ 'ÉCOLE ÀÖ'|lower }}"),
    ("filter/upper/basic", "{{ 'hello'|upper }}"),
    ("filter/upper/sharp_s", "{{ 'straße'|upper }}"),
    ("filter/upper/number", "{{ 12|upper }}"),
    ("filter/map/attribute", "{{ users|map(attribute='name')|join(',') }}", {"users": USERS}),
    ("filter/map/attribute_default", "{{ xs|map(attribute='n', default='?')|join(',') }}", {"xs": [{"n": 1}, {}]}),
    ("filter/map/attribute_missing", "{{ xs|map(attribute='n')|list }}", {"xs": [{"n": 1}, {}]}),
    ("filter/map/nested_attribute", "{{ xs|map(attribute='a.b')|list }}", {"xs": [{"a": {"b": 1}}, {"a": {"b": 2}}]}),
    ("filter/map/index_attribute", "{{ pairs|map(attribute='0')|list }}", {"pairs": [["a", 1], ["b", 2]]}),
    ("filter/map/filter_name", "{{ ['a', 'b']|map('upper')|list }}"),
    ("filter/map/filter_with_args", "{{ ['aa', 'ba']|map('replace', 'a', 'x')|list }}"),
    ("filter/map/int", "{{ ['1', '2', 'x']|map('int')|sum }}"),
    ("filter/map/unknown_filter", "{{ [1]|map('nope')|list }}"),
    ("filter/max/ints", "{{ [3, 1, 2]|max }}"),
    ("filter/max/strings_case_insensitive", "{{ ['B', 'a', 'C', 'b']|max }}"),
    ("filter/max/case_sensitive", "{{ ['B', 'a', 'C']|max(case_sensitive=true) }}"),
    ("filter/max/attribute", "{{ (users|max(attribute='age')).name }}", {"users": USERS}),
    ("filter/max/empty", "[{{ []|max }}]"),
    ("filter/max/mixed_numbers", "{{ [1, 2.5, 2]|max }}"),
    ("filter/min/ints", "{{ [3, 1, 2]|min }}"),
    ("filter/min/strings", "{{ ['b', 'A', 'c']|min }}"),
    ("filter/min/attribute", "{{ (users|min(attribute='age')).name }}", {"users": USERS}),
    ("filter/min/mixed_types", "{{ [1, 'a']|min }}"),
    ("filter/replace/basic", "{{ 'hello world'|replace('o', '0') }}"),
    ("filter/replace/count", "{{ 'aaaa'|replace('a', 'b', 2) }}"),
    ("filter/replace/empty_old", "{{ 'abc'|replace('', '-') }}"),
    ("filter/replace/not_found", "{{ 'abc'|replace('x', 'y') }}"),
    ("filter/replace/number", "{{ 1234|replace('2', 'x') }}"),
    ("filter/replace/missing_arg", "{{ 'abc'|replace('a') }}"),
    ("filter/reverse/string", "{{ 'abc'|reverse }}"),
    ("filter/reverse/list", "{{ [1, 2, 3]|reverse|list }}"),
    ("filter/reverse/join", "{{ xs|reverse|join(',') }}", {"xs": ["a", "b"]}),
    ("filter/reverse/loop", "{% for x in [1, 2, 3]|reverse %}{{ x }}{% endfor %}"),
    ("filter/round/default", "{{ 2.4|round }} {{ 2.6|round }}"),
    ("filter/round/half_even", "{{ 2.5|round }} {{ 3.5|round }} {{ -2.5|round }}"),
    ("filter/round/precision", "{{ 3.14159|round(2) }} {{ 2.675|round(2) }}"),
    ("filter/round/int_stays_int", "{{ 42|round }} {{ 42|round(2) }}"),
    ("filter/round/ceil", "{{ 2.1|round(0, 'ceil') }} {{ 2.11|round(1, 'ceil') }}"),
    ("filter/round/floor", "{{ 2.9|round(0, 'floor') }} {{ -2.1|round(method='floor') }}"),
    ("filter/round/then_int", "{{ 2.7|round|int }}"),
    ("filter/round/negative_precision", "{{ 1234.5|round(-2) }}"),
    ("filter/round/bad_method", "{{ 2.5|round(0, 'up') }}"),
    ("filter/round/string", "{{ '2.5'|round }}"),
    ("filter/select/no_test", "{{ [0, 1, '', 'a', none]|select|list }}"),
    ("filter/select/odd", "{{ range(6)|select('odd')|list }}"),
    ("filter/select/test_arg", "{{ [1, 5, 10]|select('gt', 3)|list }}"),
    ("filter/select/operator_test", "{{ [1, 5, 10]|select('>=', 5)|list }}"),
    ("filter/select/equalto", "{{ ['a', 'b', 'a']|select('equalto', 'a')|list }}"),
    ("filter/select/in", "{{ [1, 2, 3]|select('in', [2, 3])|list }}"),
    ("filter/select/string_test", "{{ [1, 'a', none, 'b']|select('string')|join }}"),
    ("filter/reject/odd", "{{ range(6)|reject('odd')|list }}"),
    ("filter/reject/none", "{{ [1, none, 2]|reject('none')|list }}"),
    ("filter/reject/no_test", "{{ [0, 1, '', 'a']|reject|list }}"),
    ("filter/selectattr/truthy", "{{ users|selectattr('active')|map(attribute='name')|join(',') }}", {"users": USERS}),
    ("filter/selectattr/test", "{{ users|selectattr('age', 'gt', 30)|map(attribute='name')|join(',') }}", {"users": USERS}),
    ("filter/selectattr/equalto", "{{ users|selectattr('role', 'equalto', 'user')|map(attribute='name')|list }}", {"users": USERS}),
    ("filter/selectattr/missing_attr", "{{ xs|selectattr('k')|list }}", {"xs": [{"k": 1}, {}, {"k": 0}]}),
    ("filter/selectattr/defined", "{{ xs|selectattr('k', 'defined')|list|length }}", {"xs": [{"k": 1}, {}, {"k": None}]}),
    ("filter/selectattr/count", "{{ users|selectattr('active')|list|length }}", {"users": USERS}),
    ("filter/rejectattr/truthy", "{{ users|rejectattr('active')|map(attribute='name')|join(',') }}", {"users": USERS}),
    ("filter/rejectattr/none", "{{ xs|rejectattr('v', 'none')|map(attribute='v')|list }}", {"xs": [{"v": 1}, {"v": None}, {"v": 0}]}),
    ("filter/sort/ints", "{{ [3, 1, 2]|sort }}"),
    ("filter/sort/reverse", "{{ [3, 1, 2]|sort(reverse=true) }}"),
    ("filter/sort/strings_case_insensitive", "{{ ['b', 'B', 'a', 'C']|sort }}"),
    ("filter/sort/case_sensitive", "{{ ['b', 'B', 'a', 'C']|sort(case_sensitive=true) }}"),
    ("filter/sort/attribute", "{{ users|sort(attribute='age')|map(attribute='name')|join(',') }}", {"users": USERS}),
    ("filter/sort/attribute_string", "{{ users|sort(attribute='name')|map(attribute='name')|join(',') }}", {"users": USERS}),
    ("filter/sort/multi_attribute", "{{ xs|sort(attribute='g,n')|map(attribute='n')|join(',') }}",
     {"xs": [{"g": 2, "n": "a"}, {"g": 1, "n": "c"}, {"g": 1, "n": "b"}]}),
    ("filter/sort/floats_mixed", "{{ [2, 1.5, -1, 0]|sort }}"),
    ("filter/sort/mixed_types", "{{ [1, 'a']|sort }}"),
    ("filter/sort/dict", "{{ d|sort }}", {"d": {"b": 1, "a": 2}}),
    ("filter/sort/stable", "{{ xs|sort(attribute='k')|map(attribute='n')|join }}",
     {"xs": [{"k": 1, "n": "a"}, {"k": 0, "n": "b"}, {"k": 1, "n": "c"}, {"k": 0, "n": "d"}]}),
    ("filter/split/not_a_filter", "{{ 'a,b'|split(',') }}"),
    ("filter/string/int", "{{ (1|string) ~ 2 }}"),
    ("filter/string/list", "{{ [1, 'a']|string }}"),
    ("filter/string/none", "{{ none|string }}"),
    ("filter/string/length", "{{ 12345|string|length }}"),
    ("filter/striptags/basic", "{{ '<p>Hello <b>world</b></p>'|striptags }}"),
    ("filter/striptags/whitespace_collapsed", "{{ s|striptags }}", {"s": "<div>\n  a\n\n  b\t c </div>"}),
    ("filter/striptags/entities", "{{ '&lt;x&gt; &amp; &quot;q&quot; &#39;'|striptags }}"),
    ("filter/striptags/comment", "{{ 'a<!-- hidden -->b'|striptags }}"),
    ("filter/striptags/br", "{{ 'one<br/>two'|striptags }}"),
    ("filter/sum/basic", "{{ [1, 2, 3]|sum }}"),
    ("filter/sum/floats", "{{ [0.1, 0.2]|sum }}"),
    ("filter/sum/attribute", "{{ items|sum(attribute='price') }}", {"items": ITEMS}),
    ("filter/sum/start", "{{ [1, 2]|sum(start=10) }}"),
    ("filter/sum/empty", "{{ []|sum }}"),
    ("filter/sum/strings", "{{ ['a', 'b']|sum }}"),
    ("filter/title/basic", "{{ 'hello big world'|title }}"),
    ("filter/title/apostrophe", "{{ \"it's a dog's life\"|title }}"),
    ("filter/title/hyphen", "{{ 'jean-luc picard'|title }}"),
    ("filter/title/mixed_case", "{{ 'hELLO wORLD'|title }}"),
    ("filter/title/brackets", "{{ '(hello) [world] x.y'|title }}"),
    ("filter/tojson/dict_sorted", "{{ d|tojson }}", {"d": {"b": 1, "a": [1, 2.5, None, True]}}),
    ("filter/tojson/string", "{{ 'hi'|tojson }}"),
    ("filter/tojson/html_chars", "{{ s|tojson }}", {"s": "<a href='x'>&</a>"}),
    ("filter/tojson/unicode", "{{ s|tojson }}", {"s": "é 你 🎉"}),
    ("filter/tojson/control", "{{ s|tojson }}", {"s": "a\nb\t\"c\"\\"}),
    ("filter/tojson/indent", "{{ d|tojson(indent=2) }}", {"d": {"b": [1, 2], "a": {}}}),
    ("filter/tojson/indent_positional", "{{ [1, [2]]|tojson(2) }}"),
    ("filter/tojson/scalars", "{{ none|tojson }} {{ true|tojson }} {{ 1.0|tojson }} {{ 10|tojson }}"),
    ("filter/tojson/empty", "{{ []|tojson }} {{ {}|tojson }}"),
    ("filter/tojson/tuple", "{{ (1, 'a')|tojson }}"),
    ("filter/trim/basic", "[{{ '  a b  '|trim }}]"),
    ("filter/trim/newlines", "[{{ s|trim }}]", {"s": "\n\t x \r\n"}),
    ("filter/trim/chars", "[{{ 'xxhixx'|trim('x') }}]"),
    ("filter/trim/nbsp", "[{{ s|trim }}]", {"s": "\u00a0x\u3000"}),
    ("filter/truncate/short_untouched", "{{ 'hello'|truncate(10) }}"),
    ("filter/truncate/words", "{{ 'The quick brown fox jumps'|truncate(15) }}"),
    ("filter/truncate/leeway_keeps", "{{ 'The quick brown'|truncate(12) }}"),
    ("filter/truncate/leeway_zero", "{{ 'The quick brown'|truncate(12, leeway=0) }}"),
    ("filter/truncate/killwords", "{{ 'The quick brown fox'|truncate(10, true) }}"),
    ("filter/truncate/end", "{{ 'The quick brown fox jumps'|truncate(12, end='…') }}"),
    ("filter/truncate/end_empty", "{{ 'The quick brown fox jumps'|truncate(12, false, '') }}"),
    ("filter/truncate/no_space", "{{ 'abcdefghijklmnopqrstuvwxyz'|truncate(10) }}"),
    ("filter/truncate/default_255", "{{ s|truncate|length }}", {"s": "word " * 60}),
    ("filter/truncate/default_within_leeway", "{{ s|truncate|length }}", {"s": "x" * 260}),
    ("filter/truncate/default_over_leeway", "{{ s|truncate|length }} {{ s|truncate|last }}", {"s": "x" * 261}),
    ("filter/truncate/default", "{{ s|truncate }}", {"s": ("lorem ipsum dolor sit amet " * 12).strip()}),
    ("filter/truncate/tiny_length", "{{ 'hello world foo'|truncate(2, leeway=0) }}"),
    ("filter/truncate/bad_length", "{{ 'abc'|truncate('x') }}"),
    ("filter/unique/ints", "{{ [1, 2, 1, 3, 2]|unique|list }}"),
    ("filter/unique/case_insensitive", "{{ ['a', 'A', 'b', 'B', 'a']|unique|list }}"),
    ("filter/unique/case_sensitive", "{{ ['a', 'A', 'a']|unique(case_sensitive=true)|list }}"),
    ("filter/unique/attribute", "{{ users|unique(attribute='role')|map(attribute='name')|list }}", {"users": USERS}),
    ("filter/unique/int_float", "{{ [1, 1.0, true]|unique|list }}"),
    ("filter/urlencode/string", "{{ 'a b&c=d/e?f'|urlencode }}"),
    ("filter/urlencode/unicode", "{{ 'é 你'|urlencode }}"),
    ("filter/urlencode/safe_chars", "{{ \"-_.~!*'()\"|urlencode }}"),
    ("filter/urlencode/dict", "{{ d|urlencode }}", {"d": {"q": "a b", "n": 1, "x": "&/"}}),
    ("filter/urlencode/pairs", "{{ [('a', 1), ('b', 'c d')]|urlencode }}"),
    ("filter/urlencode/number", "{{ 12|urlencode }}"),
    ("filter/wordcount/basic", "{{ 'hello  big   world'|wordcount }}"),
    ("filter/wordcount/punctuation", "{{ \"it's a well-known fact, isn't it?\"|wordcount }}"),
    ("filter/wordcount/empty", "{{ ''|wordcount }}"),
    ("filter/wordcount/unicode", "{{ 'héllo 你好 wörld'|wordcount }}"),
    ("filter/batch/basic", "{% for row in range(7)|batch(3) %}{{ row }}{% endfor %}"),
    ("filter/batch/fill", "{% for row in range(7)|batch(3, 'x') %}{{ row|join }} {% endfor %}"),
    ("filter/batch/exact", "{{ [1, 2, 3, 4]|batch(2)|list }}"),
    ("filter/slice/basic", "{% for col in range(7)|slice(3) %}{{ col }}{% endfor %}"),
    ("filter/slice/fill", "{% for col in range(7)|slice(3, 0) %}{{ col|join }} {% endfor %}"),
    ("filter/slice/more_slices_than_items", "{{ [1, 2]|slice(4)|list }}"),
    ("filter/indent/default", "{{ 'a\nb\nc'|indent }}"),
    ("filter/indent/width", "{{ 'a\nb'|indent(2) }}"),
    ("filter/indent/first", "{{ 'a\nb'|indent(2, true) }}"),
    ("filter/indent/blank_default", "{{ s|indent(2) }}", {"s": "a\n\nb\n"}),
    ("filter/indent/blank_true", "{{ s|indent(2, blank=true) }}", {"s": "a\n\nb\n"}),
    ("filter/indent/string_width", "{{ 'a\nb'|indent('> ', true) }}"),
    ("filter/indent/single_line", "[{{ 'a'|indent(4) }}]"),
    ("filter/indent/in_block", "items:\n  {{ s|indent(2) }}", {"s": "- a\n- b"}),
    ("filter/format/positional", "{{ '%s is %d years'|format('Ann', 31) }}"),
    ("filter/format/float", "{{ '%.2f'|format(3.14159) }} {{ '%5.1f|'|format(2.25) }}"),
    ("filter/format/kwargs", "{{ '%(a)s-%(b)s'|format(a=1, b='x') }}"),
    ("filter/format/padding", "[{{ '%-5s|%5s'|format('a', 'b') }}]"),
    ("filter/format/repr", "{{ '%r'|format('x') }}"),
    ("filter/format/too_few", "{{ '%s %s'|format(1) }}"),
    ("filter/items/loop", "{% for k, v in d|items %}{{ k }}:{{ v }} {% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("filter/items/list", "{{ d|items|list }}", {"d": {"a": 1}}),
    ("filter/items/undefined", "{% for k, v in missing|items %}x{% else %}none{% endfor %}"),
    ("filter/items/list_input", "{{ [1]|items|list }}"),
    ("filter/groupby/basic", "{% for g in users|groupby('role') %}{{ g.grouper }}:{{ g.list|map(attribute='name')|join(',') }} {% endfor %}", {"users": USERS}),
    ("filter/groupby/unpack", "{% for role, us in users|groupby('role') %}{{ role }}={{ us|length }} {% endfor %}", {"users": USERS}),
    ("filter/filesizeformat/basic", "{{ 1000|filesizeformat }} {{ 1500000|filesizeformat }} {{ 1024|filesizeformat(true) }} {{ 1|filesizeformat }}"),
    ("filter/wordwrap/basic", "{{ 'the quick brown fox jumps over'|wordwrap(10) }}"),
    ("filter/pprint/dict", "{{ d|pprint }}", {"d": {"b": 1, "a": [1, 2]}}),
    ("filter/chain/three", "{{ '  Hello World  '|trim|lower|replace(' ', '-') }}"),
    ("filter/chain/args_expr", "{{ xs|join(sep ~ ' ') }}", {"xs": ["a", "b"], "sep": ";"}),
    ("filter/unknown", "{{ 'x'|nope }}"),
    ("filter/unknown_in_untaken_branch", "{% if false %}{{ 'x'|nope }}{% endif %}ok"),

    # --------------------------------------------------- python methods
    ("method/str/strip", "[{{ s.strip() }}]", {"s": "  hi \n"}),
    ("method/str/strip_chars", "[{{ s.strip('x-') }}]", {"s": "x-hi-x"}),
    ("method/str/lstrip", "[{{ s.lstrip() }}]", {"s": "  hi  "}),
    ("method/str/rstrip", "[{{ s.rstrip() }}]", {"s": "  hi  "}),
    ("method/str/rstrip_chars", "{{ s.rstrip('.!') }}", {"s": "hi!.."}),
    ("method/str/split_ws", "{{ s.split() }}", {"s": " a  b\tc\n"}),
    ("method/str/split_sep", "{{ s.split(',') }}", {"s": "a,b,,c"}),
    ("method/str/split_maxsplit", "{{ s.split(',', 1) }}", {"s": "a,b,c"}),
    ("method/str/split_loop", "{% for p in s.split(',') %}[{{ p.strip() }}]{% endfor %}", {"s": "a, b ,c"}),
    ("method/str/split_index", "{{ s.split('@')[1] }}", {"s": "user@example.com"}),
    ("method/str/rsplit", "{{ s.rsplit('.', 1) }}", {"s": "a.b.c"}),
    ("method/str/rsplit_ws", "{{ s.rsplit() }}", {"s": "a b  c"}),
    ("method/str/startswith", "{{ s.startswith('ht') }} {{ s.startswith('x') }}", {"s": "https://x"}),
    ("method/str/startswith_tuple", "{{ s.startswith(('ftp', 'http')) }}", {"s": "https://x"}),
    ("method/str/endswith", "{{ s.endswith('.pdf') }}", {"s": "doc.pdf"}),
    ("method/str/replace", "{{ s.replace('a', 'o') }}", {"s": "banana"}),
    ("method/str/replace_count", "{{ s.replace('a', 'o', 1) }}", {"s": "banana"}),
    ("method/str/upper_lower", "{{ s.upper() }} {{ s.lower() }}", {"s": "MiXeD"}),
    ("method/str/title", "{{ s.title() }}", {"s": "it's a dog's life"}),
    ("method/str/capitalize", "{{ s.capitalize() }}", {"s": "hELLO"}),
    ("method/str/find", "{{ s.find('lo') }} {{ s.find('z') }}", {"s": "hello"}),
    ("method/str/count", "{{ s.count('a') }}", {"s": "banana"}),
    ("method/str/join", "{{ ', '.join(xs) }}", {"xs": ["a", "b", "c"]}),
    ("method/str/join_nonstr", "{{ ', '.join(xs) }}", {"xs": [1, 2]}),
    ("method/str/format_positional", "{{ '{} and {}'.format('a', 1) }}"),
    ("method/str/format_named", "{{ 'Hi {name}!'.format(name=n) }}", {"n": "Ann"}),
    ("method/str/format_spec", "{{ '{:.2f}|{:>4}|{:03d}'.format(3.14159, 'x', 7) }}"),
    ("method/str/format_missing", "{{ '{} {}'.format(1) }}"),
    ("method/str/splitlines", "{{ s.splitlines() }}", {"s": "a\nb\r\nc\n"}),
    ("method/str/isdigit", "{{ a.isdigit() }} {{ b.isdigit() }} {{ c.isdigit() }}", {"a": "123", "b": "12a", "c": ""}),
    ("method/str/isalpha_isspace", "{{ 'abc'.isalpha() }} {{ ' '.isspace() }}"),
    ("method/str/zfill_center", "{{ '7'.zfill(3) }} [{{ 'a'.center(5, '*') }}]"),
    ("method/str/chained", "{{ s.strip().lower().replace(' ', '_') }}", {"s": "  Hello World "}),
    ("method/str/on_literal", "{{ 'a-b'.split('-') }}"),
    ("method/str/index_missing", "{{ 'abc'.index('z') }}"),
    ("method/str/unknown_method", "{{ s.nope() }}", {"s": "x"}),
    ("method/str/wrong_args", "{{ s.startswith() }}", {"s": "x"}),
    ("method/dict/items", "{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}", {"d": {"x": 1, "y": [2]}}),
    ("method/dict/keys_print", "{{ d.keys() }}", {"d": {"a": 1, "b": 2}}),
    ("method/dict/values_print", "{{ d.values() }}", {"d": {"a": 1, "b": "x"}}),
    ("method/dict/items_print", "{{ d.items() }}", {"d": {"a": 1}}),
    ("method/dict/keys_list", "{{ d.keys()|list }} {{ d.keys()|join(',') }}", {"d": {"a": 1, "b": 2}}),
    ("method/dict/get_default", "{{ d.get('k', 'x') }} {{ d.get('a', 'x') }}", {"d": {"a": 1}}),
    ("method/dict/get_missing_none", "{{ d.get('k') }}", {"d": {"a": 1}}),
    ("method/dict/get_null_value", "{{ d.get('a', 'x') }}", {"d": {"a": None}}),
    ("method/dict/get_in_if", "{% if d.get('k') %}yes{% else %}no{% endif %}", {"d": {}}),
    ("method/dict/copy_len", "{{ d.copy()|length }}", {"d": {"a": 1}}),
    ("method/list/index_count", "{{ xs.index('b') }} {{ xs.count('a') }}", {"xs": ["a", "b", "a"]}),
    ("method/list/pop", "{% set xs = [1, 2, 3] %}{{ xs.pop() }} {{ xs }}"),
    ("method/list/append_ctx", "{% set _ = xs.append(3) %}{{ xs }}", {"xs": [1, 2]}),
    ("method/int/on_number", "{{ (255).bit_length() }} {{ 2.5.is_integer() }}"),

    # ------------------------------------------------------------ errors
    ("error/syntax/unclosed_expr", "{{ x"),
    ("error/syntax/unclosed_expr_text", "a {{ x b"),
    ("error/syntax/unclosed_stmt", "{% if x"),
    ("error/syntax/unclosed_comment", "a {# comment"),
    ("error/syntax/unclosed_if", "{% if x %}yes"),
    ("error/syntax/unclosed_for", "{% for x in xs %}{{ x }}"),
    ("error/syntax/unclosed_raw", "{% raw %}abc"),
    ("error/syntax/unclosed_macro", "{% macro f() %}x"),
    ("error/syntax/stray_endif", "a{% endif %}"),
    ("error/syntax/stray_endfor", "{% endfor %}"),
    ("error/syntax/mismatched_end", "{% if x %}{% endfor %}"),
    ("error/syntax/unknown_tag", "{% foo %}"),
    ("error/syntax/empty_expr", "{{ }}"),
    ("error/syntax/empty_stmt", "{% %}"),
    ("error/syntax/dangling_operator", "{{ 1 + }}"),
    ("error/syntax/two_operands", "{{ a b }}"),
    ("error/syntax/unclosed_string", "{{ 'abc }}"),
    ("error/syntax/unclosed_paren", "{{ (1 + 2 }}"),
    ("error/syntax/unclosed_bracket", "{{ [1, 2 }}"),
    ("error/syntax/bad_dict", "{{ {'a' 1} }}"),
    ("error/syntax/if_no_cond", "{% if %}x{% endif %}"),
    ("error/syntax/for_no_in", "{% for x %}{% endfor %}"),
    ("error/syntax/set_no_value", "{% set x %}"),
    ("error/syntax/set_no_target", "{% set = 1 %}"),
    ("error/syntax/elif_after_else", "{% if a %}{% else %}{% elif b %}{% endif %}"),
    ("error/syntax/else_twice", "{% if a %}{% else %}{% else %}{% endif %}"),
    ("error/syntax/python_ternary_missing_else_value", "{{ 1 if true else }}"),
    ("error/syntax/triple_equals", "{{ 1 === 1 }}"),
    ("error/syntax/not_equal_diamond", "{{ 1 <> 2 }}"),
    ("error/syntax/bang", "{{ !x }}"),
    ("error/syntax/and_and", "{{ a && b }}"),
    ("error/syntax/leading_dot_float", "{{ .5 }}"),
    ("error/syntax/lambda", "{{ (lambda x: x)(1) }}"),
    ("error/syntax/list_comprehension", "{{ [x for x in xs] }}"),
    ("error/syntax/assign_in_expr", "{{ x = 1 }}"),
    ("stmt/set/name_for_allowed", "{% set for = 1 %}{{ for }}"),
    ("error/syntax/filter_no_name", "{{ x| }}"),
    ("error/syntax/unknown_filter_chain", "{{ x|upper|frobnicate }}"),
    ("error/syntax/unknown_filter_block", "{% filter nope %}x{% endfilter %}"),
    ("error/syntax/endblock_wrong_tag", "{% with a = 1 %}{% endif %}"),
    ("text/stray_close_after_expr", "{{ x }} }}"),
    ("error/undefined/attr", "{{ user.name }}"),
    ("error/undefined/nested_attr", "{{ a.b.c }}", {"a": {}}),
    ("error/undefined/item_in_loop", "{% for x in xs %}{{ x.a.b }}{% endfor %}", {"xs": [{"a": {"b": 1}}, {}]}),
    ("error/undefined/filter_arg", "{{ 'x'|replace(missing.a, 'y') }}"),
    ("error/undefined/macro_missing", "{{ nope(1) }}"),
    ("error/type/abs_string", "{{ 'a'|abs }}"),
    ("error/type/length_int", "{{ 3|length }}"),
    ("error/type/join_int", "{{ 5|join(',') }}"),
    ("error/type/sum_mixed", "{{ [1, 'a']|sum }}"),
    ("error/type/center_bad_width", "{{ 'a'|center('x') }}"),
    ("error/type/int_too_many_args", "{{ '1'|int(0, 10, 3) }}"),
    ("filter/batch/string_size_never_fills", "{{ [1, 2]|batch('x')|list }}"),
    ("error/type/iterate_number", "{% for c in 42 %}{% endfor %}"),
    ("error/type/call_string", "{{ 'abc'() }}"),
    ("error/type/dict_plus", "{{ {'a': 1} + {'b': 2} }}"),
    ("error/type/list_minus", "{{ [1, 2] - [1] }}"),
    ("error/type/bad_kwarg", "{{ 'abc'|truncate(bogus=1) }}"),
    ("error/other/zero_division", "{{ 10 % 0 }}"),
    ("error/other/format_index", "{{ '{0} {1}'.format('a') }}"),
    ("error/other/unpack_count", "{% set a, b = [1, 2, 3] %}"),
    ("error/other/namespace_on_list", "{% set xs = [] %}{% set xs.a = 1 %}"),
    ("error/other/list_index_method", "{{ [1, 2].index(9) }}"),
]


def _dify(name, template, context):
    CASES.append(("dify/" + name, template, context))


_dify("search_results_prompt", """\
You are a helpful assistant. Answer using only the sources below.

{% for r in results -%}
[{{ loop.index }}] {{ r.title }} ({{ r.url }})
{{ r.content | truncate(60) }}
{% endfor %}
Question: {{ query }}
""", {"results": RESULTS, "query": "What is Jinja?"})

_dify("search_results_threshold", """\
{%- set relevant = results | selectattr('score', 'ge', 0.5) | list -%}
Found {{ relevant | length }} relevant source{{ 's' if relevant | length != 1 }}:
{% for r in relevant %}
- {{ r.title }} (score {{ '%.0f' | format(r.score * 100) }}%)
{%- endfor %}
""", {"results": RESULTS})

_dify("search_results_empty", """\
{% for r in results %}
* {{ r.title }}
{% else %}
No results for "{{ query }}".
{% endfor %}""", {"results": [], "query": "unicorns"})

_dify("markdown_table", """\
| Item | Qty | Price | Total |
|------|----:|------:|------:|
{% for it in items -%}
| {{ it.title }} | {{ it.qty }} | {{ it.price }} | {{ it.price * it.qty }} |
{% endfor -%}
| **Sum** | {{ items | sum(attribute='qty') }} | | {{ total }} |""", {"items": ITEMS, "total": 86.5})

_dify("markdown_table_from_rows", """\
| {{ header | join(' | ') }} |
|{% for h in header %}---|{% endfor %}
{% for row in rows -%}
| {{ row | join(' | ') }} |
{% endfor %}""", {"header": ["id", "name", "ok"], "rows": [[1, "a", True], [2, "b", False], [3, None, None]]})

_dify("json_output_tojson", """\
{"answer": {{ answer | tojson }}, "sources": {{ results | map(attribute='url') | list | tojson }}, "count": {{ results | length }}}""",
      {"answer": "Jinja is \"fast\" & <safe>", "results": RESULTS})

_dify("json_output_manual", """\
{
{%- for k, v in fields.items() %}
  "{{ k }}": {{ v | tojson }}{{ "," if not loop.last }}
{%- endfor %}
}""", {"fields": {"name": "Ann", "age": 31, "tags": ["x", "y"], "note": None}})

_dify("json_pretty", "{{ payload | tojson(indent=2) }}", {"payload": {"user": {"id": 7, "name": "Zoë"}, "items": [1, 2], "ok": True}})

_dify("conditional_sections", """\
# Report for {{ user.name | title }}
{% if user.vip %}
⭐ VIP customer since {{ user.since }}
{% endif %}
{% if orders %}
## Orders ({{ orders | length }})
{% for o in orders %}
- #{{ o.id }}: {{ o.status | upper }}
{% endfor %}
{% else %}
No orders yet.
{% endif %}
""", {"user": {"name": "ann lee", "vip": True, "since": 2019}, "orders": [{"id": 1, "status": "shipped"}, {"id": 2, "status": "pending"}]})

_dify("conditional_sections_empty", """\
# Report for {{ user.name | title }}
{% if user.vip %}
VIP
{% endif %}
{%- if orders %}
has orders
{%- else %}
No orders yet.
{%- endif %}
""", {"user": {"name": "bob", "vip": False}, "orders": []})

_dify("chat_history", """\
{% for m in messages -%}
{{ m.role | capitalize }}: {{ m.content | trim }}
{% endfor -%}
Assistant:""", {"messages": [{"role": "user", "content": " Hi there "}, {"role": "assistant", "content": "Hello!\n"}, {"role": "user", "content": "Summarise this."}]})

_dify("chat_history_last_n", """\
{%- for m in messages[-2:] %}
<{{ m.role }}>{{ m.content }}</{{ m.role }}>
{%- endfor %}""", {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})

_dify("default_fallbacks", """\
Name: {{ name | default('anonymous', true) }}
Language: {{ lang or 'en' }}
Topic: {{ topic if topic else 'general' }}
Limit: {{ limit | default(10) }}""", {"name": "", "lang": None, "topic": "", "limit": 0})

_dify("tags_join", "Tags: {{ tags | map('trim') | map('lower') | unique | join(', ') }}", {"tags": ["  AI ", "ml", "Ai", "Data "]})

_dify("comma_split_list", """\
{%- set parts = keywords.split(',') -%}
{% for p in parts if p.strip() %}
{{ loop.index }}. {{ p.strip() | capitalize }}
{%- endfor %}""", {"keywords": "apples, bananas,,  cherries "})

_dify("numbered_steps", """\
Steps:
{% for s in steps %}
{{ loop.index }}/{{ loop.length }} {{ s }}{% if loop.last %} (done){% endif %}
{% endfor %}""", {"steps": ["fetch", "parse", "store"]})

_dify("email_template", """\
Dear {{ customer.first_name }},

Thank you for your order #{{ order.id }} of {{ order.lines | length }} item{{ 's' if order.lines | length > 1 else '' }}.
{% for l in order.lines %}
  - {{ '%-8s' | format(l.sku) }} x{{ l.qty }}  {{ '%.2f' | format(l.price * l.qty) }}
{% endfor %}
Total: {{ '%.2f' | format(order.lines | sum(attribute='price')) }} EUR

Regards,
{{ sender | default('The Team') }}""", {"customer": {"first_name": "Léa"}, "order": {"id": 1042, "lines": [{"sku": "A-1", "qty": 2, "price": 3.5}, {"sku": "B-22", "qty": 1, "price": 10}]}})

_dify("classification_prompt", """\
Classify the text into one of: {{ labels | join(', ') }}.
{% if examples %}
Examples:
{% for e in examples %}
Text: {{ e.text }}
Label: {{ e.label }}
{% endfor %}
{% endif %}
Text: {{ text | replace('\\n', ' ') }}
Label:""", {"labels": ["positive", "negative", "neutral"], "examples": [{"text": "Great!", "label": "positive"}], "text": "It was fine.\nNothing special."})

_dify("code_block", """\
```{{ lang | lower }}
{{ code | trim }}
```""", {"lang": "Python", "code": "\n\ndef f():\n    return 1\n\n"})

_dify("kv_dump_dictsort", """\
{% for k, v in meta | dictsort -%}
{{ k }}: {{ v }}
{% endfor %}""", {"meta": {"source": "web", "Author": "x", "date": "2024-01-02", "pages": 3}})

_dify("nested_categories", """\
{% for cat in catalog %}
## {{ cat.name }}
{% for p in cat.products -%}
{{ loop.index }}. {{ p.name }}{% if p.price is defined %} — ${{ p.price }}{% endif %}
{% endfor %}
{% endfor %}""", {"catalog": [{"name": "Fruit", "products": [{"name": "Apple", "price": 1.2}, {"name": "Pear"}]}, {"name": "Veg", "products": [{"name": "Leek", "price": 2}]}]})

_dify("groupby_summary", """\
{% for role, members in users | groupby('role') -%}
{{ role }}: {{ members | map(attribute='name') | join(', ') }} (avg age {{ (members | sum(attribute='age') / members | length) | round(1) }})
{% endfor %}""", {"users": USERS})

_dify("namespace_counter", """\
{%- set ns = namespace(done=0, todo=[]) -%}
{%- for t in tasks -%}
  {%- if t.done -%}{%- set ns.done = ns.done + 1 -%}
  {%- else -%}{%- set ns.todo = ns.todo + [t.title] -%}
  {%- endif -%}
{%- endfor -%}
{{ ns.done }}/{{ tasks | length }} done; open: {{ ns.todo | join(', ') or 'none' }}""",
      {"tasks": [{"title": "a", "done": True}, {"title": "b", "done": False}, {"title": "c", "done": False}]})

_dify("macro_render_card", """\
{%- macro card(title, body, footer=none) -%}
=== {{ title | upper }} ===
{{ body }}
{%- if footer %}
--- {{ footer }}
{%- endif %}
{% endmacro -%}
{{ card('News', 'All good.') }}
{{ card('Alert', 'Disk full.', footer='ops') }}""", {})

_dify("html_list_escape", """\
<ul>
{%- for c in comments %}
  <li>{{ c.author | e }}: {{ c.text | e }}</li>
{%- endfor %}
</ul>""", {"comments": [{"author": "<script>", "text": "a & b"}, {"author": "Tom", "text": "\"quoted\" 'single'"}]})

_dify("llm_output_cleanup", """\
{%- set text = llm_output.strip() -%}
{%- if text.startswith('```') -%}
{%- set text = text.split('\\n', 1)[1].rsplit('```', 1)[0].strip() -%}
{%- endif -%}
{{ text }}""", {"llm_output": "\n```json\n{\"a\": 1}\n```\n"})

_dify("url_building", "https://api.example.com/search?{{ params | urlencode }}&q={{ q | urlencode }}", {"params": {"lang": "en", "page": 2}, "q": "jinja & dify"})

_dify("word_stats", """\
Words: {{ text | wordcount }}
Chars: {{ text | length }}
Lines: {{ text.splitlines() | length }}
First line: {{ text.splitlines()[0] | truncate(20, true) }}""", {"text": "The first line is rather long indeed.\nSecond line.\nThird."})

_dify("batch_grid", """\
{% for row in products | batch(2, {'name': '-'}) -%}
{% for p in row %}{{ '%-8s' | format(p.name) }}{% endfor %}
{% endfor %}""", {"products": [{"name": "A"}, {"name": "B"}, {"name": "C"}]})

_dify("if_variable_types", """\
{%- for v in values -%}
{%- if v is none -%}null
{%- elif v is boolean -%}bool:{{ v | lower }}
{%- elif v is number -%}num:{{ v }}
{%- elif v is string -%}str:{{ v }}
{%- elif v is mapping -%}map:{{ v | length }}
{%- elif v is iterable -%}seq:{{ v | length }}
{%- endif %}{{ ' ' if not loop.last }}
{%- endfor %}""", {"values": [None, True, 3, 2.5, "s", {"a": 1}, [1, 2]]})

_dify("retrieval_context_with_metadata", """\
<context>
{% for doc in documents %}
<document index="{{ loop.index }}" source="{{ doc.metadata.get('source', 'unknown') }}">
{{ doc.page_content | striptags | trim }}
</document>
{% endfor %}
</context>
{{ instruction }}""", {"documents": [{"page_content": "<p>Alpha <b>beta</b></p>\n", "metadata": {"source": "a.html"}}, {"page_content": "  gamma  ", "metadata": {}}], "instruction": "Answer briefly."})

_dify("percent_and_rounding", """\
{% for k, v in scores.items() -%}
{{ k }}: {{ (v * 100) | round(1) }}% {{ '#' * (v * 10) | int }}
{% endfor %}""", {"scores": {"precision": 0.8765, "recall": 0.5, "f1": 0.6367}})

_dify("sorted_leaderboard", """\
{% for p in players | sort(attribute='score', reverse=true) -%}
{{ loop.index }}. {{ p.name }} {{ p.score }}{{ ' 🏆' if loop.first }}
{% endfor %}""", {"players": [{"name": "a", "score": 10}, {"name": "b", "score": 30}, {"name": "c", "score": 20}]})

_dify("string_methods_mix", "{{ title.strip().title() }} | {{ slug.replace('-', ' ').capitalize() }} | {{ csv.split(',') | map('trim') | join('/') }}",
      {"title": "  the great gatsby ", "slug": "hello-big-world", "csv": "a , b,c "})

_dify("json_from_object_fields", """\
{%- set out = {'name': user.name, 'adult': user.age >= 18, 'tags': user.tags | sort} -%}
{{ out | tojson }}""", {"user": {"name": "Ann", "age": 17, "tags": ["z", "a"]}})

# ------------------------------------------------- added with issue 7's second pass
TREE = [
    {"name": "a", "children": [{"name": "b", "children": []}, {"name": "c", "children": [{"name": "d", "children": []}]}]},
    {"name": "e", "children": []},
]
CASES += [
    # lists and dicts changed in place
    ("mutate/list/extend", "{% set xs = [1] %}{% set _ = xs.extend([2, 3]) %}{{ xs }}"),
    ("mutate/list/extend_self", "{% set xs = [1, 2] %}{% set _ = xs.extend(xs) %}{{ xs }}"),
    ("mutate/list/insert", "{% set xs = [1, 3] %}{% set _ = xs.insert(1, 2) %}{% set _ = xs.insert(-10, 0) %}{% set _ = xs.insert(99, 4) %}{{ xs }}"),
    ("mutate/list/pop_index", "{% set xs = [1, 2, 3] %}{{ xs.pop(0) }} {{ xs.pop(-1) }} {{ xs }}"),
    ("mutate/list/pop_empty", "{% set xs = [] %}{{ xs.pop() }}"),
    ("mutate/list/remove", "{% set xs = [1, 2, 1] %}{% set _ = xs.remove(1) %}{{ xs }}"),
    ("mutate/list/remove_missing", "{% set xs = [1] %}{% set _ = xs.remove(5) %}"),
    ("mutate/list/reverse_sort", "{% set xs = [3, 1, 2] %}{% set _ = xs.sort() %}{{ xs }}{% set _ = xs.reverse() %}{{ xs }}{% set _ = xs.sort(reverse=true) %}{{ xs }}"),
    ("mutate/list/sort_strings_case", "{% set xs = ['b', 'A', 'a'] %}{% set _ = xs.sort() %}{{ xs }}"),
    ("mutate/list/clear", "{% set xs = [1, [2]] %}{% set _ = xs.clear() %}{{ xs }}"),
    ("mutate/list/alias", "{% set a = [1] %}{% set b = a %}{% set _ = b.append(2) %}{{ a }}"),
    ("mutate/list/loop_accumulate", "{% set out = [] %}{% for u in users if u.active %}{% set _ = out.append(u.name|upper) %}{% endfor %}{{ out|join(', ') }}", {"users": USERS}),
    ("mutate/list/copy_is_new", "{% set a = [1] %}{% set b = a.copy() %}{% set _ = b.append(2) %}{{ a }} {{ b }}"),
    ("mutate/list/list_filter_copies", "{% set a = [1] %}{% set b = a|list %}{% set _ = b.append(2) %}{{ a }} {{ b }}"),
    ("mutate/dict/update_kwargs", "{% set d = {'a': 1} %}{% set _ = d.update(b=2, a=3) %}{{ d }}"),
    ("mutate/dict/update_pairs", "{% set d = {} %}{% set _ = d.update([('x', 1), ('y', 2)]) %}{{ d }}"),
    ("mutate/dict/pop", "{% set d = {'a': 1, 'b': 2} %}{{ d.pop('a') }} {{ d.pop('z', 'none') }} {{ d }}"),
    ("mutate/dict/pop_missing", "{% set d = {} %}{{ d.pop('z') }}"),
    ("mutate/dict/setdefault", "{% set d = {'a': 1} %}{{ d.setdefault('a', 5) }} {{ d.setdefault('b', 7) }} {{ d }}"),
    ("mutate/dict/popitem", "{% set d = {'a': 1, 'b': 2} %}{{ d.popitem() }} {{ d }}"),
    ("mutate/dict/clear_copy", "{% set d = {'a': 1} %}{% set c = d.copy() %}{% set _ = d.clear() %}{{ d }} {{ c }}"),
    ("mutate/dict/group_counts", "{% set counts = {} %}{% for u in users %}{% set _ = counts.update({u.role: counts.get(u.role, 0) + 1}) %}{% endfor %}{{ counts }}", {"users": USERS}),
    ("mutate/context_untouched_between_uses", "{% set _ = xs.append(9) %}{{ xs|length }}{% for x in xs %}{{ x }}{% endfor %}", {"xs": [1, 2]}),
    # groupby
    ("groupby/attribute_path", "{% for g in items|groupby('meta.kind') %}{{ g.grouper }}={{ g.list|length }};{% endfor %}", {"items": [{"meta": {"kind": "x"}}, {"meta": {"kind": "y"}}, {"meta": {"kind": "x"}}]}),
    ("groupby/case_insensitive_shows_first", "{% for g in xs|groupby('k') %}{{ g.grouper }}:{{ g.list|length }} {% endfor %}", {"xs": [{"k": "B"}, {"k": "a"}, {"k": "b"}]}),
    ("groupby/case_sensitive", "{% for g in xs|groupby('k', case_sensitive=true) %}{{ g.grouper }}:{{ g.list|length }} {% endfor %}", {"xs": [{"k": "B"}, {"k": "a"}, {"k": "b"}]}),
    ("groupby/default", "{% for g in xs|groupby('k', default='none') %}{{ g.grouper }}:{{ g.list|length }} {% endfor %}", {"xs": [{"k": "a"}, {}, {"k": "a"}]}),
    ("groupby/numbers", "{% for k, v in xs|groupby('n') %}{{ k }}:{{ v|map(attribute='s')|join }} {% endfor %}", {"xs": [{"n": 2, "s": "a"}, {"n": 1, "s": "b"}, {"n": 2, "s": "c"}]}),
    ("groupby/index_access", "{% for g in users|groupby('role') %}{{ g[0] }}-{{ g[1]|length }} {% endfor %}", {"users": USERS}),
    ("groupby/print", "{{ xs|groupby('k')|list }}", {"xs": [{"k": 1}, {"k": 1}]}),
    # loops
    ("loop/recursive/depth0", "{% for n in tree recursive %}{{ loop.depth0 }}{{ n.name }}{% if n.children %}[{{ loop(n.children) }}]{% endif %}{% endfor %}", {"tree": TREE}),
    ("loop/recursive/index_per_level", "{% for n in tree recursive %}{{ loop.index }}{{ n.name }}{% if n.children %}({{ loop(n.children) }}){% endif %}{% endfor %}", {"tree": TREE}),
    ("loop/recursive/else", "{% for n in tree recursive %}{{ n.name }}{{ loop(n.children) }}{% else %}-{% endfor %}", {"tree": TREE}),
    ("loop/changed/multi", "{% for x in xs %}{% if loop.changed(x.a, x.b) %}{{ x.a }}{{ x.b }} {% endif %}{% endfor %}", {"xs": [{"a": 1, "b": 1}, {"a": 1, "b": 1}, {"a": 1, "b": 2}]}),
    ("loop/call_not_recursive", "{% for x in [1] %}{{ loop([2]) }}{% endfor %}"),
    # cycler, joiner
    ("global/cycler/current_reset", "{% set c = cycler(1, 2, 3) %}{{ c.next() }}{{ c.next() }}{{ c.current }}{% set _ = c.reset() %}{{ c.current }}{{ c.next() }}"),
    ("global/cycler/in_loop", "{% set c = cycler('odd', 'even') %}{% for x in range(3) %}{{ c.next() }} {% endfor %}"),
    ("global/joiner/default_sep", "{% set j = joiner() %}{% for x in 'abc' %}{{ j() }}{{ x }}{% endfor %}"),
    ("global/range_defined", "{{ range is defined }} {{ dict is defined }} {{ nope is defined }}"),
    # filters
    ("filter/wordwrap/long_word", "{{ 'abcdefghijklmnop qr'|wordwrap(5) }}"),
    ("filter/wordwrap/no_break_long", "{{ 'abcdefghijklmnop qr'|wordwrap(5, break_long_words=false) }}"),
    ("filter/wordwrap/wrapstring", "{{ 'one two three four'|wordwrap(8, wrapstring='<br>') }}"),
    ("filter/wordwrap/paragraphs", "{{ 'aaa bbb ccc\nddd eee'|wordwrap(7) }}"),
    ("filter/wordwrap/hyphens", "{{ 'well-known state-of-the-art'|wordwrap(10) }}"),
    ("filter/wordwrap/spaces", "{{ 'a  b   c'|wordwrap(3) }}"),
    ("filter/filesizeformat/units", "{{ 0|filesizeformat }} {{ 999|filesizeformat }} {{ 1234567890|filesizeformat }} {{ 1234567890|filesizeformat(true) }} {{ 10**15|filesizeformat }}"),
    ("filter/pprint/long_list", "{{ range(40)|list|pprint }}"),
    ("filter/pprint/nested", "{{ {'b': [1, 2], 'a': {'z': 1, 'y': 'two'}}|pprint }}"),
    ("filter/pprint/long_dict", "{{ users|pprint }}", {"users": USERS}),
    ("filter/sort/multi_attribute_reverse", "{{ xs|sort(attribute='g,n', reverse=true)|map(attribute='n')|join(',') }}", {"xs": [{"g": 1, "n": "b"}, {"g": 0, "n": "a"}, {"g": 1, "n": "a"}]}),
    ("filter/int/bases", "{{ '0x1A'|int(base=16) }} {{ '1A'|int(base=16) }} {{ '0b11'|int(base=2) }} {{ '12'|int(base=8) }} {{ ' 42 '|int }}"),
    ("filter/int/bad", "{{ '4 2'|int }} {{ '1__0'|int }} {{ '_1'|int }} {{ 'x'|int(7) }}"),
    ("filter/indent/first_and_string", "{{ 'a\nb'|indent('> ', first=true) }}"),
    ("filter/center/mixed", "[{{ 'ab'|center(5) }}] [{{ 'abc'|center(6) }}]"),
    ("lit/int/hex_underscore", "{{ 0xff_ff }} {{ 0b1_0 }} {{ 0O7 }}"),
    ("lit/tuple/nested_print", "{{ [(1, 2), ('a',)] }}"),
    ("lit/tuple/items_print", "{{ {'a': 1}.items()|list }}"),
    ("macro/varargs_used", "{% macro f(a) %}{{ a }}{{ varargs }}{% endmacro %}{{ f(1, 2, 3) }}"),
    ("macro/kwargs_used", "{% macro f(a) %}{{ a }}{{ kwargs }}{% endmacro %}{{ f(1, b=2) }}"),
    ("test/unknown_in_inline_if", "{{ 'x' if false else ('y' if true else 1 is nope) }}"),
    ("test/callable/macro_and_joiner", "{% macro m() %}{% endmacro %}{{ m is callable }} {{ joiner() is callable }} {{ 1 is callable }}"),
]

CASES += [
    # loops walk the list as it is at each step (Python's list iterator)
    ("loop/live/worklist", "{% set queue = [tree] %}{% for n in queue %}{{ n.name }} {% for c in n.children or [] %}{% set _ = queue.append(c) %}{% endfor %}{% endfor %}", {"tree": {"name": "root", "children": [{"name": "a", "children": [{"name": "a1"}]}, {"name": "b"}]}}),
    ("loop/live/length_grows", "{% set xs = [1, 2] %}{% for x in xs %}{% if x < 3 %}{% set _ = xs.append(x + 2) %}{% endif %}{{ x }}/{{ loop.length }} {% endfor %}"),
    # wordwrap: textwrap's chunking and long-word rules
    ("filter/wordwrap/url", "{{ 'see https://example.com/very/long/path/to/resource now'|wordwrap(30) }}"),
    ("filter/wordwrap/leading_spaces", "{{ '   leading spaces here'|wordwrap(5) }}"),
    ("filter/wordwrap/hyphen_long", "{{ 'aaaaaaaaaaaaaa-bbbbbbbb'|wordwrap(5) }}"),
    ("filter/wordwrap/em_dash", "{{ 'one--two three---four'|wordwrap(6) }}"),
    ("filter/wordwrap/tabs_kept", "{{ 'a\tb c\t\td'|wordwrap(4) }}"),
    ("filter/wordwrap/unicode", "{{ 'héllo wörld 中文字符测试 naïve-café'|wordwrap(7) }}"),
    ("filter/wordwrap/blank_lines", "{{ 'a b\n\n\nc d\n'|wordwrap(2) }}"),
    ("macro/duplicate_argument", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, a=2) }}"),
    ("filter/int/huge", "{{ '99999999999999999999'|int > 10 }}"),
]

CASES += [
    ("filter/unknown_in_inline_if_value", "{{ x|nope if false else 'ok' }}"),
    ("filter/unknown_in_inline_if_value_parens", "{{ [(x|nope) if false else 1, 2] }}"),
    ("filter/unknown_outside_if_still_fails", "{{ [x|nope if false else 1, 2|nope2] }}"),
    ("lit/tuple/ops", "{{ (1, 2) + (3,) }} {{ (1, 2) * 2 }} {{ (1, 2, 3)[0:2] }} {{ (1, 2) == [1, 2] }} {{ (1, 2) == (1, 2) }}"),
    ("lit/tuple/plus_list", "{{ (1, 2) + [3] }}"),
    ("filter/random/single", "{{ [5]|random }} {{ 'x'|random }}[{{ []|random }}]"),
]
