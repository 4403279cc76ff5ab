//! Progress on a terminal: one total line (objects and bytes against totals known from
//! the walk, the rate, the ETA, a clock that keeps moving, "completing" while the last
//! answers are awaited) and a bar for each large object in flight (small ones finish
//! between two frames, and a thousand bars would not fit).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use s3_wire::{DirectoryProgress, Progress};

use crate::report::human;

/// Objects at least this large get a bar of their own.
const LARGE: u64 = 32 << 20;

/// The progress display of one command.
pub(crate) struct Meter {
    multi: MultiProgress,
    total: ProgressBar,
    /// The label of a single transfer (its file or key), `None` for many.
    single: Option<String>,
    large: Mutex<BTreeMap<String, ProgressBar>>,
    width: usize,
    /// The last frame drawn (redrawn as finished at the end).
    last: Mutex<Option<View>>,
}

impl std::fmt::Debug for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meter").finish_non_exhaustive()
    }
}

/// The terminal's width (stderr), 80 if unknown.
fn terminal_width() -> usize {
    terminal_size::terminal_size_of(std::io::stderr())
        .map(|(w, _)| usize::from(w.0))
        .filter(|w| *w > 0)
        .unwrap_or(80)
}

impl Meter {
    /// A display for many objects (`single: None`) or for one, labelled.
    pub(crate) fn new(multi: &MultiProgress, single: Option<String>) -> Meter {
        let total = multi.add(ProgressBar::new(0));
        total.set_style(
            ProgressStyle::with_template("[{elapsed_precise}] {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        // The clock moves even while no byte does (the last parts, the completion).
        total.enable_steady_tick(Duration::from_millis(250));
        Meter {
            multi: multi.clone(),
            total,
            single,
            large: Mutex::new(BTreeMap::new()),
            width: terminal_width(),
            last: Mutex::new(None),
        }
    }

    /// One transfer's progress.
    pub(crate) fn transfer(&self, progress: Progress) {
        self.draw(View {
            objects_finished: 0,
            objects: 1,
            unfinished: true,
            bytes: progress.total.unwrap_or(0),
            known: progress.total.is_some(),
            committed: progress.committed,
        });
    }

    /// The aggregate progress of many.
    pub(crate) fn directory(&self, p: DirectoryProgress) {
        self.draw(View {
            // Of the objects to transfer (skipped ones are neither).
            objects_finished: p.objects_transferred + p.objects_failed,
            objects: p.objects_to_transfer(),
            unfinished: p.objects_to_transfer() > p.objects_transferred + p.objects_failed,
            bytes: p.bytes_to_transfer(),
            known: p.walk_complete,
            committed: p.committed,
        });
    }

    fn draw(&self, p: View) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
        let total = p.bytes;
        self.total.set_length(total.max(p.committed));
        self.total.set_position(p.committed);
        let more = if p.known { "" } else { "+" };
        let rate = self.total.per_sec();
        let state = if p.known && p.committed >= total && p.unfinished {
            "completing".to_owned()
        } else if !p.unfinished {
            "done".to_owned()
        } else if !p.known || rate < 1.0 {
            "ETA -".to_owned()
        } else {
            let seconds = (total.saturating_sub(p.committed) as f64 / rate).ceil() as u64;
            format!("ETA {}", clock(seconds))
        };
        let bytes = format!(
            "{}/{}{more}  {}/s  {state}",
            human(p.committed),
            human(total),
            human(rate as u64)
        );
        let message = match &self.single {
            Some(label) => {
                let room = self.width.saturating_sub(bytes.len() + 14).max(10);
                format!("{}  {bytes}", fit(label, room))
            }
            None => format!(
                "{}/{}{more} objects  {bytes}",
                p.objects_finished, p.objects
            ),
        };
        self.total.set_message(message);
    }

    /// One object of many: a bar of its own while a large one is in flight.
    pub(crate) fn object(&self, relative: &str, progress: Progress) {
        let Some(size) = progress.total.filter(|size| *size >= LARGE) else {
            return;
        };
        let mut large = self.large.lock().unwrap_or_else(|e| e.into_inner());
        let bar = large.entry(relative.to_owned()).or_insert_with(|| {
            let bar = self.multi.add(ProgressBar::new(size));
            let room = self.width.saturating_sub(50).max(10);
            bar.set_style(
                ProgressStyle::with_template("  {msg} {bytes}/{total_bytes} {bytes_per_sec}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_message(format!("{:room$}", fit(relative, room)));
            bar
        });
        bar.set_position(progress.committed);
    }

    /// One object of many finished: its bar goes (its result line is the record).
    pub(crate) fn object_done(&self, relative: &str) {
        let mut large = self.large.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bar) = large.remove(relative) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }

    /// The last frame stays on screen.
    pub(crate) fn finish(&self) {
        let last = *self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut last) = last {
            last.unfinished = false;
            self.draw(last);
        }
        self.total.disable_steady_tick();
        self.total.tick();
        self.total.finish();
    }
}

/// What one frame shows.
#[derive(Debug, Clone, Copy)]
struct View {
    objects_finished: u64,
    objects: u64,
    /// Some object has not finished (so all bytes stored means "completing").
    unfinished: bool,
    bytes: u64,
    /// The totals are final (the walk ended, the stream's length is known).
    known: bool,
    committed: u64,
}

/// `h:mm:ss`, or `m:ss` under an hour.
fn clock(seconds: u64) -> String {
    if seconds >= 3600 {
        format!(
            "{}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
    } else {
        format!("{}:{:02}", seconds / 60, seconds % 60)
    }
}

/// `name` in at most `room` characters: cut in the middle, so the start of the path and
/// the whole file name with its extension stay readable.
pub(crate) fn fit(name: &str, room: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= room {
        return name.to_owned();
    }
    let room = room.max(5);
    let file = chars
        .iter()
        .rposition(|c| *c == '/')
        .map_or(0, |slash| slash + 1);
    // Keep as much of the file name as fits (its end, with the extension), then the head.
    let tail = (chars.len() - file).min(room - 2).max((room - 1) / 2);
    let head = room - 1 - tail;
    let mut fitted: String = chars[..head].iter().collect();
    fitted.push('…');
    fitted.extend(&chars[chars.len() - tail..]);
    fitted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_in_the_middle_keeping_the_file_name_and_extension() {
        assert_eq!(fit("short.txt", 20), "short.txt");
        let fitted = fit("photos/2024/holiday/very-long-name-of-a-picture.jpeg", 30);
        assert_eq!(fitted.chars().count(), 30);
        assert!(fitted.ends_with("picture.jpeg"), "{fitted}");
        assert!(fitted.starts_with('p'), "{fitted}");
        let fitted = fit("a/b/c/d/e/f/g/h/archive-2026-12-01.tar.gz", 16);
        assert_eq!(fitted.chars().count(), 16);
        assert!(fitted.ends_with(".tar.gz"), "{fitted}");
    }

    #[test]
    fn clocks() {
        assert_eq!(clock(5), "0:05");
        assert_eq!(clock(3725), "1:02:05");
    }
}
