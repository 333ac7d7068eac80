//! A short-lived cache of rendered pages, per shell session: the same `web_fetch` in the same
//! session within the TTL is answered without a request. Bounded by total size; expired and
//! then oldest entries go first.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Characters kept over all entries before the oldest are dropped.
pub const CACHE_MAX_CHARS: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub session: String,
    pub url: String,
    pub raw: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cached<T> {
    pub value: T,
    pub age: Duration,
}

struct Entry<T> {
    value: T,
    size: usize,
    stored: Instant,
}

pub struct FetchCache<T> {
    entries: Mutex<HashMap<CacheKey, Entry<T>>>,
    max_chars: usize,
}

impl<T: Clone> Default for FetchCache<T> {
    fn default() -> Self {
        Self::new(CACHE_MAX_CHARS)
    }
}

impl<T: Clone> FetchCache<T> {
    pub fn new(max_chars: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            max_chars,
        }
    }

    fn lock(&self) -> parking_lot::MutexGuard<'_, HashMap<CacheKey, Entry<T>>> {
        self.entries.lock()
    }

    /// The entry for `key` if it is younger than `ttl`.
    pub fn get(&self, key: &CacheKey, ttl: Duration) -> Option<Cached<T>> {
        let entries = self.lock();
        let entry = entries.get(key)?;
        let age = entry.stored.elapsed();
        (age < ttl).then(|| Cached {
            value: entry.value.clone(),
            age,
        })
    }

    /// Stores `value` (of `size` characters), dropping expired, then oldest, entries to fit.
    pub fn put(&self, key: CacheKey, value: T, size: usize, ttl: Duration) {
        if ttl.is_zero() || size > self.max_chars {
            return;
        }
        let mut entries = self.lock();
        entries.retain(|_, e| e.stored.elapsed() < ttl);
        entries.remove(&key);
        let mut total: usize = entries.values().map(|e| e.size).sum();
        while total + size > self.max_chars {
            let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, e)| e.stored)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = entries.remove(&oldest) {
                total -= e.size;
            }
        }
        entries.insert(
            key,
            Entry {
                value,
                size,
                stored: Instant::now(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(session: &str, url: &str) -> CacheKey {
        CacheKey {
            session: session.into(),
            url: url.into(),
            raw: false,
        }
    }

    #[test]
    fn entries_are_per_session_and_expire() {
        let cache = FetchCache::new(100);
        let ttl = Duration::from_secs(60);
        cache.put(key("a", "u"), "page".to_string(), 4, ttl);
        assert_eq!(cache.get(&key("a", "u"), ttl).unwrap().value, "page");
        assert!(cache.get(&key("b", "u"), ttl).is_none());
        assert!(cache.get(&key("a", "u"), Duration::ZERO).is_none());
    }

    #[test]
    fn the_oldest_go_when_full() {
        let cache = FetchCache::new(10);
        let ttl = Duration::from_secs(60);
        cache.put(key("s", "1"), 1, 6, ttl);
        cache.put(key("s", "2"), 2, 6, ttl);
        assert!(cache.get(&key("s", "1"), ttl).is_none());
        assert_eq!(cache.get(&key("s", "2"), ttl).unwrap().value, 2);
        cache.put(key("s", "3"), 3, 11, ttl);
        assert!(cache.get(&key("s", "3"), ttl).is_none(), "too big to cache");
    }
}
