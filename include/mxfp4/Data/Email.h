//===- Email.h - the text of RFC-822 e-mail messages ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns a raw e-mail (as in the SpamAssassin corpus) into training text: the
// headers are dropped, multipart/* and message/rfc822 parts are walked, and
// the text/plain and text/html parts are kept, decoded from quoted-printable
// or base64 and converted to UTF-8, with HTML tags, scripts and styles
// stripped. It approximates this Python (data.md), which produced the
// reference text:
//
//   msg = email.message_from_bytes(raw, policy=email.policy.default)
//   for part in msg.walk(): if type is text/plain or text/html:
//     text = part.get_content()   # or the payload as latin-1 on error
//     html: drop (?is)<(script|style).*?</\1>, replace (?s)<[^>]+> by ' '
//   '\n'.join(parts).strip()
//
// It differs from Python in the charsets: UTF-8 is kept (an invalid byte
// becomes U+FFFD); ISO-8859-1, ISO-8859-15 and windows-1252 are converted
// here and other named charsets (Big5, GB2312, ISO-2022-JP, KOI8-R...) by
// the C library's iconv; text without a charset, in us-ascii (Python turns
// its 8-bit bytes into U+FFFD) or in a charset iconv does not know is kept
// when it is valid UTF-8, else read as ISO-8859-1. RFC 2047 encoded words
// and RFC 2231 parameters are not decoded. Measured on the 6,046 messages:
// 5,864 texts are byte-identical to Python 3.11's, 174 differ only in
// non-ASCII characters (mostly U+FFFD against ISO-8859-1), 8 otherwise
// (edge cases of broken quoted-printable and of whitespace).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DATA_EMAIL_H
#define MXFP4_DATA_EMAIL_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::mxfp4 {

/// Returns the text of the e-mail `message` (UTF-8, possibly empty).
std::string extractEmailText(llvm::StringRef message);

/// Removes <script>/<style> elements and replaces every other tag by a
/// space, as the two regexes above do; entities are kept.
std::string stripHtml(llvm::StringRef html);

/// Decodes quoted-printable text ("=XX" escapes, "=" soft line breaks); a
/// malformed escape is kept as is.
std::string decodeQuotedPrintable(llvm::StringRef text);

/// Decodes base64, skipping characters outside the alphabet (line breaks)
/// and stopping at padding.
std::string decodeBase64Lenient(llvm::StringRef text);

} // namespace mlir::mxfp4

#endif // MXFP4_DATA_EMAIL_H
