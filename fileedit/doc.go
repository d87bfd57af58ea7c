// Package fileedit applies a small model's text edits to a file, forgiving
// where forgiveness is safe, strict where it is not, and informative when
// it refuses.
//
// Small models retype the text they want to replace: spaces where the file
// has tabs, an extra blank line at an edge, "\n" for a Windows file. A
// strict matcher sends them into loops of the same failing edit; a fuzzy one
// corrupts files. This package sits between the two.
//
// Invariants:
//   - Apply and ApplyFile are pure: no I/O, no panic on any input, and the
//     input slice is never modified.
//   - A refused call returns a *Error whose Error() is the repair text for
//     the model, and no edit of the call is applied: the caller writes
//     nothing.
//   - old is searched in three passes, strictest first (exact; without
//     blank edge lines or the indentation of a single line; line by line
//     ignoring indentation), and the first pass that finds anything wins:
//     text present verbatim is never matched another way.
//   - A match is used only when it is the only one of its pass; two loose
//     matches are refused like two exact ones.
//   - Loose matching forgives only ASCII whitespace (spaces, tabs): the
//     content of every line of old, whitespace aside, is what the file
//     holds at that place. Other spaces (NBSP, thin spaces) are not
//     indentation but a typographic slip, read by the repairs below.
//   - When the match ignored indentation, new is re-indented into the
//     file's indentation — its base level and its unit, tabs or spaces
//     — and the summary counts it.
//   - Every edit of a call is resolved against the original content;
//     overlapping edits are refused, and an old that exists only once
//     another edit is applied is refused with that reason.
//   - An accepted call changes the file: edits that leave it as it was
//     (old == new, or a loose match re-indented back to the same text) are
//     refused, so the model never believes in a change that did not happen.
//   - A miss shows the nearest lines of the file with their line numbers,
//     when at least half of old's lines coincide, and names the
//     frequent slips it recognises (line numbers copied into old, "\n"
//     written as two characters).
//   - First-try repairs: when no pass finds old, the slips of one
//     reading are tried — line-number prefixes of a listing, \n and \t
//     written as two characters, doubled backslashes, \" for ", HTML
//     entities, a Markdown code fence, typographic characters for ASCII
//     ones or the reverse. Each reads old and new the same way; the repaired
//     old must then be found exactly once by the passes, every other
//     reading found in the file must agree with it, and the file must not
//     hold text of the slip's own form (numbered lines, entities, fences)
//     where that would make the "slip" content. The summary names the
//     repair and what to send next time; anything less is refused, naming
//     the slip seen.
//   - Near readings refuse: before a repair is applied, the other readings
//     one transform away are looked for — the other slips, and each slip
//     undone the other way (escapes and entities added to old, the file's
//     own line numbers); typographic characters are compared both ways,
//     curled and straightened. One that matches somewhere else refuses the
//     edit, naming both places with their lines.
//   - A repair writes the file's own characters: a kind of mark it took
//     out of old (escapes, entities, a fence, line numbers, typographic
//     quotes, dashes or spaces) is written only where the file's lines at
//     that place have it, and indentation only with the characters those
//     lines use, re-derived from the repaired text; otherwise the repair
//     is refused.
//   - Bytes outside the replaced regions are kept byte for byte: the BOM,
//     CRLF endings (mixed ones too) and the rest of the file. New text
//     gets the file's dominant line ending.
//   - Nothing here touches the disk: reading and the atomic write
//     are fileedit/disk's.
//
// This is a leaf package: it imports only the standard library and go-udiff,
// and knows nothing of tools, the engine or any front end.
package fileedit
