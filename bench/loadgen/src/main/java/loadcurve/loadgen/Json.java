package loadcurve.loadgen;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Just enough JSON for the counts file: maps (insertion-ordered), lists, strings, numbers,
 * booleans and null. Top-level keys one per line; nested values on one line, so a reader can
 * scan the file (intervals come one per line). NaN and infinities are written as null; strings
 * come out as ASCII, anything else as a \\u escape.
 */
final class Json {
    private Json() {
    }

    static String write(Map<String, ?> top) {
        StringBuilder b = new StringBuilder("{\n");
        int i = 0;
        for (Map.Entry<String, ?> e : top.entrySet()) {
            b.append("  ").append(quote(e.getKey())).append(": ");
            if (e.getValue() instanceof List<?> list && !list.isEmpty()) {
                b.append("[\n");
                for (int j = 0; j < list.size(); j++) {
                    b.append("    ");
                    value(b, list.get(j));
                    b.append(j + 1 < list.size() ? ",\n" : "\n");
                }
                b.append("  ]");
            } else {
                value(b, e.getValue());
            }
            b.append(++i < top.size() ? ",\n" : "\n");
        }
        return b.append("}\n").toString();
    }

    /** The whole map on one line (the self-test's output). */
    static String line(Map<String, ?> top) {
        StringBuilder b = new StringBuilder();
        value(b, top);
        return b.toString();
    }

    private static void value(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            b.append(quote(s));
        } else if (v instanceof Double d) {
            b.append(number(d));
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else if (v instanceof Map<?, ?> map) {
            b.append('{');
            int i = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                b.append(i++ > 0 ? ", " : "").append(quote(e.getKey().toString())).append(": ");
                value(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof List<?> list) {
            b.append('[');
            for (int i = 0; i < list.size(); i++) {
                b.append(i > 0 ? ", " : "");
                value(b, list.get(i));
            }
            b.append(']');
        } else {
            throw new IllegalArgumentException("no JSON for " + v.getClass());
        }
    }

    /** Whole numbers without a fraction, others with up to 6 decimals (enough for shares and s). */
    static String number(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return "null";
        }
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        String s = String.format(Locale.ROOT, "%.6f", d);
        return s.replaceAll("0+$", "").replaceAll("\\.$", "");
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    // Non-ASCII too: the counts file is ASCII, and a body head may be any text.
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
