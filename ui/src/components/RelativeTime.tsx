// RelativeTime: "3 min ago", the absolute time as its tooltip; re-rendered
// every 30 s by one shared ticker.
import { useEffect, useState } from 'react';
import { absoluteTime, relativeTime } from '../format';

const listeners = new Set<() => void>();
let ticker: number | undefined;

function useNow(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const fn = () => setNow(Date.now());
    listeners.add(fn);
    if (ticker === undefined) ticker = window.setInterval(() => listeners.forEach((l) => l()), 30000);
    return () => {
      listeners.delete(fn);
      if (!listeners.size) {
        window.clearInterval(ticker);
        ticker = undefined;
      }
    };
  }, []);
  return now;
}

export function RelativeTime({ ms }: { ms: number }) {
  const now = useNow();
  if (!ms) return null;
  return (
    <time dateTime={new Date(ms).toISOString()} title={absoluteTime(ms)} className="rel-time">
      {relativeTime(ms, now)}
    </time>
  );
}
