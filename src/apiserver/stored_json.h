// The stored text of an object served without decoding it.
//
// The Registry stores every object as compact JSON with sorted keys (nlohmann's dump) and without
// metadata.resourceVersion, which is the key's modRevision. A read answers the same object with
// the resourceVersion set: decoding into a tree, setting it and dumping again gives exactly the
// stored text with `"resourceVersion":"N"` inserted at its sorted place in metadata. Doing that
// insertion on the text (one scan of the top level and of metadata) is what makes a LIST of
// 10,000 pods cheap: no tree per object, no re-encoding. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace minik8s::apiserver {

// Appends to `out` the text a GET or LIST answers for `stored` at `revision`, labelled
// apiVersion/kind: the stored text with metadata.resourceVersion inserted. Returns false (and
// leaves `out` as it was) when the text is not of the shape this can patch: not compact JSON, its
// apiVersion or kind absent or different, metadata missing or already holding a resourceVersion.
// The caller then decodes and encodes the object itself. Members are checked up to metadata
// only when apiVersion and kind come before it (sorted keys, as the Registry writes): what
// follows, spec and status, is taken as the encoder wrote it.
bool appendServedText(std::string& out, std::string_view stored, int64_t revision,
                      std::string_view apiVersion, std::string_view kind);

}  // namespace minik8s::apiserver
