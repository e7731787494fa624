import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// A read error in the middle of a FLAC file (a USB disk pulled mid-read) is an error, not a hang. libFLAC answers
/// "went on" to every call once it has aborted, so a decoder that trusted the answer spun forever. The error is
/// made real: an `LD_PRELOAD` shim makes `pread` (how the decoder's `FileReader` reads) return short reads, and fail
/// with EIO where it would reach the end of the file.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FLACReadErrorTests {
    static let shim = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <errno.h>
        #include <unistd.h>
        /* Reads come 64 bytes at a time (short reads are allowed), and the one that would reach the end of the file
           fails (EIO) instead: the end is never seen as such. */
        typedef ssize_t (*Read)(int, void *, size_t, off_t);
        static ssize_t failingAtTheEnd(Read real, int fd, void *p, size_t n, off_t at) {
            size_t want = n < 64 ? n : 64;
            ssize_t got = real(fd, p, want, at);
            if (got >= 0 && (size_t)got < want) { errno = EIO; return -1; }
            return got;
        }
        ssize_t pread(int fd, void *p, size_t n, off_t offset) {
            static Read real;
            if (!real) real = (Read)dlsym(RTLD_NEXT, "pread");
            return failingAtTheEnd(real, fd, p, n, offset);
        }
        ssize_t pread64(int fd, void *p, size_t n, off64_t offset) {
            static Read real;
            if (!real) real = (Read)dlsym(RTLD_NEXT, "pread64");
            return failingAtTheEnd(real, fd, p, n, offset);
        }
        """

    @Test(.enabled(if: CAPI.onPath("cc") && !BuildProducts.sanitized))
    func aReadErrorWhileCountingAnUnknownLengthIsAnError() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.shim.write(toFile: folder + "/eio.c", atomically: true, encoding: .utf8)
        let build = try CAPI.run(["cc", "-shared", "-fPIC", "-o", folder + "/eio.so", folder + "/eio.c", "-ldl"])
        try #require(build.status == 0, "cc eio.so: \(build.stderr)")
        // STREAMINFO says 0 samples, so opening it decodes the whole stream to count them, into the failing read.
        let file = BuildProducts.root + "/Tests/Fuzz/regressions/flac/unknown-length.flac"
        let healthy = try ToolRunner.run(["info", file], timeout: 30)
        #expect(healthy.status == 0, "\(healthy.stderr)")
        let failing = try ToolRunner.run(["info", file], environment: ["LD_PRELOAD": folder + "/eio.so"], timeout: 30)
        #expect(!failing.timedOut && !failing.killedBySignal, "ambience info hung on a read error")
        #expect(
            failing.status != 0 && failing.stderr.contains("decoding aborted"), "\(failing.status): \(failing.stderr)")
    }
}
