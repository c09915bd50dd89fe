// Talking to the Taskline API: JSON in and out, problem+json errors turned into ApiError.

/** An answer that was not 2xx, with the problem+json detail when the server sent one. */
export class ApiError extends Error {
  constructor(status, problem, retryAfter) {
    const detail = (problem && (problem.detail || problem.title)) || `HTTP ${status}`;
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem || null;
    this.retryAfter = retryAfter;
  }
}

// Relative to the page, so the dashboard also works behind a proxy that mounts it under a path.
function url(path) {
  return path.startsWith('/') ? path.slice(1) : path;
}

// With API keys on, the page signs in once (POST /api/session with the key): the server sets an
// HttpOnly cookie this script cannot read, and answers a CSRF value that every change must echo.
const CSRF = 'taskline-csrf';

/** Set by the page: shows the sign-in form and resolves once signed in. */
export const session = { signIn: null };
let signingIn = null;

/** Opens a session with an API key; the key itself is not kept. */
export async function signIn(key) {
  const response = await fetch(url('/api/session'), {
    method: 'POST', headers: { Accept: 'application/json', Authorization: `Bearer ${key}` }, cache: 'no-store',
  });
  const json = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(response.status, json);
  }
  sessionStorage.setItem(CSRF, json.csrf);
  return json;
}

async function request(method, path, body, retried) {
  const init = { method, headers: { Accept: 'application/json' }, cache: 'no-store' };
  const csrf = sessionStorage.getItem(CSRF);
  if (csrf && method !== 'GET') {
    init.headers['X-CSRF-Token'] = csrf;
  }
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url(path), init);
  } catch (e) {
    throw new ApiError(0, { detail: `cannot reach the server (${e.message})` });
  }
  const text = await response.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (response.status === 401 && !retried && session.signIn && path.startsWith('/api/')) {
    // One sign-in for all the requests that were refused meanwhile; then each is sent again.
    signingIn = signingIn || session.signIn().finally(() => { signingIn = null; });
    await signingIn;
    return request(method, path, body, true);
  }
  if (!response.ok) {
    const retryAfter = Number(response.headers.get('Retry-After')) || null;
    throw new ApiError(response.status, json || { detail: `${method} ${path} answered ${response.status}` }, retryAfter);
  }
  return json;
}

export const api = {
  get: (path) => request('GET', path),
  post: (path, body) => request('POST', path, body === undefined ? {} : body),
  url,
};

/** Builds a query string from the defined, non-empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') {
      search.set(key, String(value));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
