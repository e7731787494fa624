import Glibc

/// A pointer each thread holds for itself under one key (`pthread_key_create`), given to the key's destructor when
/// a thread that set it ends: a per-thread value C code reads (the C API's last error message).
///
/// Reading and setting are inlinable, so that a caller in another module pays no more than the C call. Setting may
/// allocate (glibc makes a thread's room for keys past the 32nd at its first set), so neither belongs on the audio
/// thread. A key is made once and lives as long as the process (there is no `pthread_key_delete`: a thread may still hold a
/// value under it).
package struct ThreadLocalKey: @unchecked Sendable {
    /// Called with a thread's value, when it is not nil, as the thread ends.
    package typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void

    @usableFromInline let key: pthread_key_t

    /// Makes a key; EAGAIN once the process has made all the keys it may (`PTHREAD_KEYS_MAX`).
    package init(destructor: Destructor?) throws(Errno) {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, destructor)
        guard status == 0 else { throw Errno(status) }
        self.key = key
    }

    /// The calling thread's value, nil until it set one.
    @inlinable package var value: UnsafeMutableRawPointer? { pthread_getspecific(key) }

    /// Sets the calling thread's value; the old one is not given to the destructor (the caller frees it). False when
    /// the thread's room for the value could not be made (ENOMEM): the key then still holds the old value.
    @inlinable @discardableResult package func set(_ value: UnsafeMutableRawPointer?) -> Bool {
        pthread_setspecific(key, value) == 0
    }
}
