// The nodes on this journal: live ones with their last heartbeat, version, address, config hash and
// the upkeep lease, then those gone within the last hour. An admin's view: a key without the scope
// is refused (403), and the section says so.

import { api } from './api.js';
import { dateTime, h, num, reconcileRows, time } from './dom.js';

const REFRESH_MS = 2000;

export function nodesTable(root) {
  const table = root.querySelector('table');
  const tbody = table.tBodies[0];
  const status = root.querySelector('.status');
  let timer;
  let stopped = false;

  function setStatus(text, kind) {
    status.hidden = !text;
    status.textContent = text || '';
    status.dataset.kind = kind || '';
  }

  function update(row, node) {
    row.dataset.live = String(node.live);
    row.classList.toggle('gone', !node.live);
    const c = row.cells;
    c[0].querySelector('.node-id').textContent = node.id;
    c[0].querySelector('.tag').hidden = !node.self;
    const state = c[1].querySelector('.badge');
    state.textContent = node.live ? 'live' : 'gone';
    state.dataset.state = node.live ? 'running' : 'cancelled';
    c[1].title = node.live ? '' : `gone at ${dateTime(node.goneAt)}`;
    c[2].textContent = node.live ? `${num(node.heartbeatAgeMs)} ms ago` : time(node.goneAt);
    c[2].title = dateTime(node.lastHeartbeat);
    c[3].textContent = node.version || '';
    c[4].textContent = node.address || '';
    c[5].textContent = `${node.queuesHash} · ${node.configEpoch}`;
    c[5].title = 'hash of its queues\' shared definitions · config epoch (raised by --take-over-config)';
    c[6].textContent = (node.leases || []).join(', ');
    c[7].textContent = num(node.streams);
  }

  function render(nodes) {
    reconcileRows(tbody, nodes, (n) => n.id,
      () => h('tr', null,
        h('th', { scope: 'row' }, h('span.mono.node-id'), ' ', h('span.tag', { title: 'the node serving this page' }, 'this')),
        h('td', null, h('span.badge')),
        h('td.num'),
        h('td'),
        h('td.mono'),
        h('td.mono'),
        h('td'),
        h('td.num')),
      update);
    const hashes = new Set(nodes.filter((n) => n.live).map((n) => n.queuesHash));
    root.dataset.count = String(nodes.filter((n) => n.live).length);
    if (hashes.size > 1) {
      setStatus('Live nodes hold different queue definitions: a rolling change is under way (see configEpoch).', 'warn');
    } else {
      setStatus('');
    }
  }

  async function refresh() {
    clearTimeout(timer);
    if (stopped) {
      return;
    }
    try {
      const answer = await api.get('/api/nodes');
      render(answer.nodes || []);
    } catch (e) {
      if (e.status === 403) {
        stopped = true;
        table.hidden = true;
        setStatus(`Nodes are shown to admin keys only: ${e.message}`);
        root.dataset.forbidden = 'true';
        return;
      }
      setStatus(e.message, 'error');
    }
    timer = setTimeout(refresh, REFRESH_MS);
  }

  return { start: refresh, refresh };
}
