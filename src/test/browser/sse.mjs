// A minimal Server-Sent Events reader over fetch, for tests: parses the stream as the browser's
// EventSource does (event, data, id, retry fields; comments; the last event id carries over).

/**
 * Opens `url` and calls `onEvent({event, data, id, lastEventId})` for each dispatched event until
 * it returns true ("stop here", the connection is then aborted and the rest of the bytes are never
 * looked at), the server ends the stream, or `timeoutMs` passes (an error).
 * Returns {events, stoppedEarly, ended, status, headers, comments, retry}.
 */
export async function readEvents(url, { lastEventId, onEvent = () => false, timeoutMs = 30000 } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no end of ${url} within ${timeoutMs} ms`)), timeoutMs);
  const headers = { Accept: 'text/event-stream' };
  if (lastEventId !== undefined && lastEventId !== null) {
    headers['Last-Event-ID'] = String(lastEventId);
  }
  const outcome = { events: [], stoppedEarly: false, ended: false, comments: 0, retry: null, status: 0, headers: null };
  try {
    const response = await fetch(url, { headers, signal: controller.signal });
    outcome.status = response.status;
    outcome.headers = response.headers;
    if (response.status !== 200) {
      outcome.body = await response.text();
      return outcome;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let event = { event: '', data: [], id: undefined };
    let currentLastId = lastEventId === undefined ? '' : String(lastEventId);
    const reader = response.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        outcome.ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer[newline] === '\r' && buffer[newline + 1] === '\n' ? 2 : 1));
        if (line === '') {
          if (event.id !== undefined) {
            currentLastId = event.id;
          }
          if (event.data.length) {
            const dispatched = {
              event: event.event || 'message',
              data: event.data.join('\n'),
              id: event.id,
              lastEventId: currentLastId,
            };
            outcome.events.push(dispatched);
            if (onEvent(dispatched)) {
              outcome.stoppedEarly = true;
              outcome.lastEventId = currentLastId;
              controller.abort();
              return outcome;
            }
          }
          event = { event: '', data: [], id: undefined };
          continue;
        }
        if (line.startsWith(':')) {
          outcome.comments++;
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) {
          value = value.slice(1);
        }
        if (field === 'event') {
          event.event = value;
        } else if (field === 'data') {
          event.data.push(value);
        } else if (field === 'id') {
          if (!value.includes('\0')) {
            event.id = value;
          }
        } else if (field === 'retry') {
          if (/^\d+$/.test(value)) {
            outcome.retry = Number(value);
          }
        }
      }
    }
    outcome.lastEventId = currentLastId;
    return outcome;
  } catch (e) {
    if (outcome.stoppedEarly) {
      return outcome;
    }
    throw controller.signal.aborted && controller.signal.reason instanceof Error ? controller.signal.reason : e;
  } finally {
    clearTimeout(timer);
  }
}
