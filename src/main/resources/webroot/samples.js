// Built-in sample data for the qualification-match form: three company profiles and a dozen
// projects. Names are matched case-insensitively by the handler, so they must be spelled alike.

export const COMPANIES = [
  {
    key: 'construction',
    label: 'Nordbau Construction (construction firm)',
    company: {
      name: 'Nordbau Construction GmbH',
      qualifications: [
        { name: 'ISO 9001', level: 4, expires: '2028-09-30' },
        { name: 'ISO 45001', level: 3, expires: '2027-03-31' },
        { name: 'EN 1090 EXC3', level: 4, expires: '2028-01-15' },
        { name: 'BIM', level: 3, expires: '2029-06-30' },
        { name: 'Asbestos removal', level: 2, expires: '2025-12-31' },
        { name: 'Crane operation', level: 3, expires: '2027-11-30' },
      ],
    },
  },
  {
    key: 'it',
    label: 'Brightwave IT Consulting (IT consultancy)',
    company: {
      name: 'Brightwave IT Consulting',
      qualifications: [
        { name: 'ISO 27001', level: 4, expires: '2028-05-31' },
        { name: 'Cloud architecture', level: 4, expires: '2027-10-31' },
        { name: 'Kubernetes', level: 3, expires: '2027-04-30' },
        { name: 'Scrum', level: 5, expires: '2030-01-31' },
        { name: 'GDPR', level: 3, expires: '2028-12-31' },
        { name: 'SAP S/4HANA', level: 2, expires: '2027-08-31' },
        { name: 'Penetration testing', level: 2, expires: '2025-06-30' },
      ],
    },
  },
  {
    key: 'lab',
    label: 'Helix Analytical Lab (laboratory)',
    company: {
      name: 'Helix Analytical Lab',
      qualifications: [
        { name: 'ISO 17025', level: 5, expires: '2028-02-29' },
        { name: 'GLP', level: 4, expires: '2027-09-30' },
        { name: 'GMP', level: 3, expires: '2027-06-30' },
        { name: 'Mass spectrometry', level: 4, expires: '2029-03-31' },
        { name: 'Biosafety', level: 2, expires: '2027-12-31' },
        { name: 'Data integrity', level: 3, expires: '2028-07-31' },
        { name: 'ISO 9001', level: 3, expires: '2026-01-31' },
      ],
    },
  },
];

const req = (name, minLevel, weight, mandatory = false) => ({ name, minLevel, weight, mandatory });

export const PROJECTS = [
  {
    name: 'Harbour bridge retrofit',
    requirements: [req('ISO 9001', 3, 2, true), req('EN 1090 EXC3', 3, 3, true), req('ISO 45001', 2, 2, true), req('BIM', 2, 1)],
  },
  {
    name: 'Hospital wing extension',
    requirements: [req('ISO 9001', 3, 2), req('ISO 45001', 3, 2, true), req('BIM', 3, 2), req('Asbestos removal', 2, 1)],
  },
  {
    name: 'Municipal cloud migration',
    requirements: [req('ISO 27001', 3, 3, true), req('Cloud architecture', 3, 3), req('Kubernetes', 2, 2), req('GDPR', 3, 2, true)],
  },
  {
    name: 'Bank core-system upgrade',
    requirements: [req('ISO 27001', 4, 3, true), req('SAP S/4HANA', 3, 3), req('Penetration testing', 3, 2), req('Scrum', 3, 1)],
  },
  {
    name: 'Pharma batch release testing',
    requirements: [req('GMP', 4, 3, true), req('ISO 17025', 4, 3, true), req('Data integrity', 3, 2), req('Mass spectrometry', 3, 1)],
  },
  {
    name: 'Drinking-water monitoring',
    requirements: [req('ISO 17025', 3, 2, true), req('Mass spectrometry', 4, 2), req('Data integrity', 2, 1)],
  },
  {
    name: 'Clinical trial bioanalysis',
    requirements: [req('GLP', 4, 3, true), req('Biosafety', 2, 2, true), req('Mass spectrometry', 4, 2), req('GDPR', 2, 1)],
  },
  {
    name: 'Data-centre build',
    requirements: [req('ISO 9001', 2, 1), req('ISO 45001', 3, 2, true), req('Crane operation', 3, 2), req('ISO 27001', 2, 1), req('BIM', 2, 1)],
  },
  {
    name: 'Smart-grid control software',
    requirements: [req('ISO 27001', 3, 3, true), req('Kubernetes', 3, 2), req('Scrum', 2, 1)],
  },
  {
    name: 'School asbestos remediation',
    requirements: [req('Asbestos removal', 3, 3, true), req('ISO 45001', 3, 2, true), req('ISO 9001', 2, 1)],
  },
  {
    name: 'Lab information system rollout',
    requirements: [req('Data integrity', 3, 2, true), req('GDPR', 3, 2), req('Cloud architecture', 2, 1), req('ISO 17025', 2, 1)],
  },
  {
    name: 'Port crane replacement',
    requirements: [req('Crane operation', 4, 3, true), req('EN 1090 EXC3', 3, 2), req('ISO 45001', 2, 1)],
  },
];

export const MAX_PROJECTS = 10;
