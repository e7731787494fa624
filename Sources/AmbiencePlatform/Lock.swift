import Glibc
import Synchronization

/// A `Mutex` that ThreadSanitizer can see.
///
/// The standard library's `Mutex` locks with futexes inside the (uninstrumented) runtime, so under
/// `--sanitize=thread` every access it guards looks unsynchronized: a counter bumped by two threads under
/// `withLock` is reported as a data race (Swift 6.3, Linux). In a ThreadSanitizer build, `Lock` tells the
/// sanitizer about each acquire and release (`__tsan_acquire`/`__tsan_release`, found at start-up); in any other
/// build it is exactly a `Mutex` plus one never-taken branch. Its calls are `@inlinable`: every mixer call takes a
/// lock from another module, and an unspecialized generic call there would cost more than the lock. The type itself
/// is `@usableFromInline` too: without it Swift 6.3 silently calls the `@inlinable` members of a package type.
@usableFromInline package struct Lock<Value: ~Copyable>: ~Copyable {
    @usableFromInline let mutex: Mutex<Value>
    /// The address the sanitizer knows this lock by; nil without ThreadSanitizer.
    @usableFromInline let token: UnsafeMutableRawPointer?

    @inlinable package init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
        token = ThreadSanitizerHooks.shared.map { _ in .allocate(byteCount: 1, alignment: 1) }
    }

    deinit { token?.deallocate() }

    @inlinable package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            guard let token, let hooks = ThreadSanitizerHooks.shared else { return try body(&value) }
            hooks.acquire(token)
            defer { hooks.release(token) }
            return try body(&value)
        }
    }
}

extension Lock: @unchecked Sendable where Value: ~Copyable {}

/// ThreadSanitizer's annotation entry points, when the process runs under it.
@usableFromInline struct ThreadSanitizerHooks: Sendable {
    @usableFromInline typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
    @usableFromInline let acquire: Hook
    @usableFromInline let release: Hook

    @usableFromInline static let shared: ThreadSanitizerHooks? = {
        guard let acquire = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire"),
            let release = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_release")
        else { return nil }
        return ThreadSanitizerHooks(
            acquire: unsafeBitCast(acquire, to: Hook.self), release: unsafeBitCast(release, to: Hook.self))
    }()
}
