// WhoAmI: the header's "who is signed in" (GET /api/me): the user, how
// (SSO session or token), and its teams with the role in each; the title
// adds the role outside team spaces and the token's scopes.
import type { Me } from '../types';

export function WhoAmI({ me }: { me: Me }) {
  const via = me.via === 'session' ? 'SSO' : me.via === 'admin_token' ? 'admin token' : me.via;
  const title =
    `${me.user} (${via})` +
    (me.admin ? ' · server admin' : ` · ${me.default_role} outside team spaces`) +
    (me.scopes.length ? ` · scopes: ${me.scopes.join(', ')}` : '');
  return (
    <span className="whoami" data-testid="whoami" title={title}>
      <strong data-part="user">{me.user}</strong>
      {me.admin && <span className="chip" data-part="admin">admin</span>}
      {me.teams.map((t) => (
        <span className="chip" key={t.team} data-part="team" data-team={t.team} data-role={t.role}>
          {t.team}: {t.role}
        </span>
      ))}
    </span>
  );
}
